/**
 * The recalibration function, run on a schedule: for every policy whose current version has
 * gathered enough reviewer labels since it was calibrated, writes a proposed next version with
 * its report under `calibration/` in the pipeline bucket and emits "Calibration Proposed".
 * Nothing is applied: a person reviews the proposal and applies it (docs/calibration.md).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { EventBridgeSchema } from "@aws-lambda-powertools/parser/schemas/eventbridge";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { z } from "zod";
import { S3ObjectStore } from "../shared/adapters/s3-object-store.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { RECALIBRATION } from "../shared/domain/topology.ts";
import {
  type ProposalDependencies,
  proposeCalibrations,
} from "../shared/use-cases/calibration/propose-calibration.ts";
import { s3Client } from "./support/clients.ts";
import { positiveInteger, requireEnv } from "./support/config.ts";
import { sharedDependencies } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: "recalibrate" });

type ScheduledEvent = z.infer<typeof EventBridgeSchema>;

/** The function's dependencies, from the environment. */
export async function recalibrationDependencies(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProposalDependencies> {
  return {
    ...(await sharedDependencies(env)),
    objects: new S3ObjectStore(s3Client(env), requireEnv(FUNCTION_ENV.PROPOSALS_BUCKET, env)),
  };
}

/** The handler for given dependencies. */
export function createRecalibrateHandler(dependencies: () => Promise<ProposalDependencies>) {
  const resolved = lazy(dependencies);
  const minLabels = positiveInteger(FUNCTION_ENV.RECALIBRATION_MIN_LABELS, RECALIBRATION.minLabels);
  const prefix = process.env[FUNCTION_ENV.PROPOSALS_PREFIX] ?? RECALIBRATION.prefix;
  async function lambdaHandler(event: ScheduledEvent): Promise<unknown> {
    const outcomes = await proposeCalibrations(await resolved(), { minLabels, prefix });
    // The summaries are large: log what happened to each policy, not the fits themselves.
    const results = outcomes.map(({ policyId, version, status, labels }) => ({
      policyId,
      version,
      status,
      labels,
    }));
    logger.info("recalibration", { scheduledAt: event.time, results });
    return { results };
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(parser({ schema: EventBridgeSchema }));
}

/** The Lambda entry point. */
export const handler = createRecalibrateHandler(() => recalibrationDependencies());
