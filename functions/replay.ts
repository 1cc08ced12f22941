/**
 * The replay function, invoked by an operator after a fix: `{"mode": "redrive"}` moves the whole
 * dead-letter queue back with SQS's own StartMessageMoveTask; `{"mode": "filtered", "filter": {...},
 * "dryRun": true}` lists (or re-sends) only the matching messages.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { z } from "zod";
import { redriveAll, SqsQueue } from "../shared/adapters/sqs-queue.ts";
import { replayFiltered } from "../shared/use-cases/replay.ts";
import { sqsClient } from "./clients.ts";
import { requireEnv } from "./config.ts";
import { sharedDependencies } from "./dependencies.ts";
import { tracer } from "./tracing.ts";

const logger = new Logger({ serviceName: "replay" });

const requestSchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("redrive") }).strict(),
  z
    .object({
      mode: z.literal("filtered"),
      dryRun: z.boolean().default(true),
      filter: z
        .object({
          policy: z.string().optional(),
          reason: z.string().optional(),
          olderThanMs: z.number().int().min(0).optional(),
          newerThanMs: z.number().int().min(0).optional(),
        })
        .strict()
        .default({}),
    })
    .strict(),
]);

async function lambdaHandler(event: unknown): Promise<unknown> {
  const request = requestSchema.parse(event);
  if (request.mode === "redrive") {
    const taskHandle = await redriveAll(sqsClient(), requireEnv("DLQ_ARN"));
    logger.info("redrive started", { taskHandle });
    return { taskHandle };
  }
  const deps = await sharedDependencies();
  const report = await replayFiltered({
    deadLetters: new SqsQueue(sqsClient(), requireEnv("DLQ_URL")),
    destination: new SqsQueue(sqsClient(), requireEnv("INTAKE_QUEUE_URL")),
    filter: request.filter,
    dryRun: request.dryRun,
    failureOf: (id) => deps.store.failureOf(id),
  });
  logger.info("filtered replay", {
    matched: report.matched.length,
    moved: report.moved,
    skipped: report.skipped,
  });
  return report;
}

/** The Lambda entry point. */
export const handler = middy(lambdaHandler)
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger));
