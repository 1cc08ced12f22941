/**
 * The drift function, run on a schedule: compares each policy's recent decisions with its
 * calibration baseline and emits "Calibration Drift" where they differ.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import { runDriftCheck } from "../shared/calibration/drift-check.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";

const logger = new Logger({ serviceName: "drift" });

/** The handler for given dependencies. */
export function createDriftHandler(dependencies: () => Promise<SharedDependencies>) {
  let resolved: Promise<SharedDependencies> | undefined;
  async function lambdaHandler(): Promise<unknown> {
    resolved ??= dependencies();
    const results = await runDriftCheck(await resolved, {
      periodHours: Number(process.env.DRIFT_PERIOD_HOURS ?? 24),
    });
    logger.info("drift check", { results });
    return { results };
  }
  return middy(lambdaHandler).use(injectLambdaContext(logger));
}

/** The Lambda entry point. */
export const handler = createDriftHandler(() => sharedDependencies());
