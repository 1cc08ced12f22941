/**
 * The async lane's result function in a process of its own, so that a test can kill it mid-way
 * (SIGKILL: no cleanup runs) and start another, as Lambda loses an execution environment. It
 * consumes the notifications queue with the local poller, one notification per invocation, with
 * the environment the local wiring gave the lane's functions (JSON in ASYNC_CHILD_ENV). Prints
 * "ready" once polling, and "handled <messageId>" per notification handled.
 *
 *   ASYNC_CHILD_ENV='{...}' ASYNC_CHILD_QUEUE_URL=... node --import tsx test/helpers/async-results-child.ts
 */
import { createAsyncResultsHandler, resultDependenciesFromEnv } from "../../functions/async-results.ts";
import { sqsClient } from "../../functions/support/clients.ts";
import { startSqsPoller } from "../../infra/local/sqs/sqs-poller.ts";
import { quietPowertools } from "../../infra/local/stand-ins.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { EVENT_SOURCE_MAPPINGS } from "../../shared/domain/topology/event-source-mapping.ts";

quietPowertools();
const env = JSON.parse(process.env.ASYNC_CHILD_ENV ?? "{}") as Record<string, string>;
const queue = new SqsQueue(sqsClient(env), process.env.ASYNC_CHILD_QUEUE_URL ?? "");
const dependencies = resultDependenciesFromEnv(env);
const handler = createAsyncResultsHandler(() => dependencies);
startSqsPoller({
  queue,
  queueArn: "arn:aws:sqs:us-east-1:123456789012:async-results",
  handler: async (event, context) => {
    const response = await handler(event, context);
    for (const record of event.Records) process.stdout.write(`handled ${record.messageId}\n`);
    return response;
  },
  mapping: EVENT_SOURCE_MAPPINGS.asyncResults,
  functionName: "async-results",
});
process.stdout.write("ready\n");
