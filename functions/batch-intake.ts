/**
 * The batch intake function: S3 calls it when a file lands under `incoming/<policy>/` in the
 * pipeline bucket. It streams the object line by line (memory stays flat whatever the file's
 * size), validates each line, queues the accepted items on the batch lane in batches of 10 with
 * retries, and writes the refused lines with their reasons beside the batch's files. S3 may
 * notify twice: the batch id comes from the key and ETag, and a second run changes nothing.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { S3Schema } from "@aws-lambda-powertools/parser/schemas/s3";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { z } from "zod";
import { SqsQueue } from "../shared/adapters/sqs-queue.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { BATCH_LANE } from "../shared/domain/topology.ts";
import { type IntakeDependencies, runIntake } from "../shared/use-cases/batch-intake.ts";
import { sqsClient } from "./support/clients.ts";
import { requireEnv } from "./support/config.ts";
import { batchJobFromEnv } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: "batch-intake" });

type S3Event = z.infer<typeof S3Schema>;

/** The intake's dependencies, from the environment. */
export async function intakeDependenciesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<IntakeDependencies> {
  const { shared, batches, objects } = await batchJobFromEnv(env);
  return {
    ...batches,
    objects,
    policies: shared.policies,
    queue: new SqsQueue(sqsClient(env), requireEnv(FUNCTION_ENV.BATCH_QUEUE_URL, env)),
  };
}

/** The handler for given dependencies. */
export function createBatchIntakeHandler(dependencies: () => Promise<IntakeDependencies>) {
  const resolved = lazy(dependencies);
  async function lambdaHandler(event: S3Event): Promise<unknown> {
    const deps = await resolved();
    const results = [];
    for (const record of event.Records) {
      // Keys arrive URL-encoded, with "+" for spaces.
      const key = decodeURIComponent(record.s3.object.key.replace(/\+/g, " "));
      if (!key.startsWith(BATCH_LANE.incomingPrefix)) continue;
      const batch = await runIntake(deps, key, { etag: record.s3.object.eTag ?? "" });
      logger.info("batch intake", { key, batchId: batch.batchId, counts: batch.counts });
      results.push({ key, batchId: batch.batchId, counts: batch.counts });
    }
    return { results };
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(parser({ schema: S3Schema }));
}

/** The Lambda entry point. */
export const handler = createBatchIntakeHandler(() => intakeDependenciesFromEnv());
