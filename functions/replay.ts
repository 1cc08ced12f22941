/**
 * The replay function, invoked by an operator after a fix, for one dead-letter source
 * (`shared/domain/dead-letters.ts`): `{"source": "review", "mode": "redrive"}` moves that
 * queue's dead letters back to it with SQS's own StartMessageMoveTask; `{"source":
 * "human-rule", "mode": "filtered", "filter": {...}, "dryRun": false}` lists (or sends home) only
 * the matching letters: back to the source queue, or the stored events to their rule's target
 * queue, each pipeline event only as the event its decision record stands for. The
 * routes come from `DEAD_LETTER_ROUTES`, written by the CDK app.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { z } from "zod";
import { redriveAll, SqsQueue } from "../shared/adapters/sqs-queue.ts";
import { DEAD_LETTER_SOURCES, queueArnOf, RETURN_KIND, routeOf } from "../shared/domain/dead-letters.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { homeQueue, homeRuleTarget, replayFiltered } from "../shared/use-cases/replay.ts";
import { sqsClient } from "./support/clients.ts";
import { requireEnv } from "./support/config.ts";
import { sharedDependencies } from "./support/dependencies.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: "replay" });

const source = z.enum(Object.keys(DEAD_LETTER_SOURCES) as [keyof typeof DEAD_LETTER_SOURCES]);
const requestSchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("redrive"), source }).strict(),
  z
    .object({
      mode: z.literal("filtered"),
      source,
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
  const route = routeOf(requireEnv(FUNCTION_ENV.DEAD_LETTER_ROUTES), request.source);
  if (request.mode === "redrive") {
    if (route.kind !== RETURN_KIND.queue)
      throw new RangeError(`${request.source} letters do not go back by redrive: use mode "filtered"`);
    // The home queue is named as the destination: items the decide function dead-lettered itself
    // were sent, not redriven, so SQS would not know where they came from.
    const taskHandle = await redriveAll(sqsClient(), queueArnOf(route.dlqUrl), queueArnOf(route.queueUrl!));
    logger.info("redrive started", { source: request.source, taskHandle });
    return { taskHandle };
  }
  if (route.kind === RETURN_KIND.none && !request.dryRun)
    throw new RangeError(`${request.source} letters are listed, not moved: send "dryRun": true`);
  const deps = await sharedDependencies();
  const sendHome =
    route.kind === RETURN_KIND.queue
      ? homeQueue(new SqsQueue(sqsClient(), route.queueUrl!))
      : route.kind === RETURN_KIND.rule
        ? homeRuleTarget(new SqsQueue(sqsClient(), route.queueUrl!), {
            deliver: route.deliver ?? "event",
            store: deps.store,
          })
        : undefined;
  const report = await replayFiltered({
    deadLetters: new SqsQueue(sqsClient(), route.dlqUrl),
    ...(sendHome ? { sendHome } : {}),
    filter: request.filter,
    dryRun: request.dryRun,
    failureOf: (id) => deps.store.failureOf(id),
  });
  logger.info("filtered replay", {
    source: request.source,
    matched: report.matched.length,
    moved: report.moved,
    left: report.left,
    failed: report.failed.length,
  });
  return report;
}

/** The Lambda entry point. */
export const handler = middy(lambdaHandler)
  .use(captureLambdaHandler(tracer))
  .use(injectLambdaContext(logger));
