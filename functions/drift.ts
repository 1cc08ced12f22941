/**
 * The drift function, run on a schedule: compares each policy's recent decisions with its
 * calibration baseline and emits "Calibration Drift" where they differ.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { EventBridgeSchema } from "@aws-lambda-powertools/parser/schemas/eventbridge";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { z } from "zod";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { DRIFT } from "../shared/domain/topology.ts";
import { runDriftCheck } from "../shared/use-cases/drift-check.ts";
import { positiveInteger } from "./support/config.ts";
import { type SharedDependencies, sharedDependencies } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: "drift" });

type ScheduledEvent = z.infer<typeof EventBridgeSchema>;

/** The handler for given dependencies. */
export function createDriftHandler(dependencies: () => Promise<SharedDependencies>) {
  const resolved = lazy(dependencies);
  async function lambdaHandler(event: ScheduledEvent): Promise<unknown> {
    const results = await runDriftCheck(await resolved(), {
      periodHours: positiveInteger(FUNCTION_ENV.DRIFT_PERIOD_HOURS, DRIFT.periodHours),
    });
    logger.info("drift check", { scheduledAt: event.time, results });
    return { results };
  }
  // The scheduled event is checked by Powertools Parser: anything else is refused, not run.
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(parser({ schema: EventBridgeSchema }));
}

/** The Lambda entry point. */
export const handler = createDriftHandler(() => sharedDependencies());
