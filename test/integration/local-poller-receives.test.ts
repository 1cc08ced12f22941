/**
 * The one local stand-in for an SQS event source mapping, on the real local SQS: whether it takes
 * one receive per invocation (a decide poller, a target) or gathers (the async lane's submit
 * function), a message the
 * handler hands back with a visibility change is delivered again with the receive count SQS would
 * give (2 on its second receive). local-aws-sqs counts a ChangeMessageVisibility as a receive too,
 * so a record built from its count would say 3.
 */
import type { SQSEvent } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SqsPoller, startSqsPoller } from "../../infra/local/sqs/sqs-poller.ts";
import { type LocalSqs, startLocalSqs } from "../../infra/local/sqs/sqs-server.ts";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";

let sqs: LocalSqs;

beforeAll(async () => {
  sqs = await startLocalSqs({ port: 0, hostname: "127.0.0.1" });
});

afterAll(async () => {
  await sqs?.close();
});

/** Starts a poller whose handler hands the message back once (visible again at once), then takes it. */
async function countsSeen(
  start: (queue: SqsQueue, handler: (event: SQSEvent) => Promise<unknown>) => SqsPoller,
) {
  const queue = await SqsQueue.create(
    sqsClient(localServiceOptions(sqs.endpoint)),
    `receives-${crypto.randomUUID()}`,
  );
  const seen: number[] = [];
  const poller = start(queue, async (event) => {
    const record = event.Records[0]!;
    seen.push(Number(record.attributes.ApproximateReceiveCount));
    if (seen.length > 1) return { batchItemFailures: [] };
    // As the decide path's overload backoff does: the item comes back, here at once.
    await queue.changeVisibility(record.receiptHandle, 0);
    return { batchItemFailures: [{ itemIdentifier: record.messageId }] };
  });
  await queue.send("one item");
  const deadline = Date.now() + 10_000;
  while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  await poller.stop();
  return seen;
}

describe("the local event source mapping's receive count", () => {
  it("is SQS's on a plain poller: 1, then 2 after a visibility change", async () => {
    const seen = await countsSeen((queue, handler) =>
      startSqsPoller({ queue, queueArn: "arn:local:plain", handler, mapping: { batchSize: 1 } }),
    );
    expect(seen).toEqual([1, 2]);
  });

  it("is SQS's when the poller gathers too (as for the async lane's submit function)", async () => {
    const seen = await countsSeen((queue, handler) =>
      startSqsPoller({
        queue,
        queueArn: "arn:local:gathering",
        handler,
        mapping: { batchSize: 20, maxBatchingWindowSeconds: 30 },
        gatherMs: 100,
      }),
    );
    expect(seen).toEqual([1, 2]);
  });
});
