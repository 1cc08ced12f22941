/**
 * Feeds SQS batches to a Lambda-style handler the way the Lambda service's event source mapping
 * does: receive up to 10 messages, invoke, delete only those not reported in
 * `batchItemFailures` (all of them kept when the handler throws). Kept messages come back after
 * the visibility timeout (or the one the handler set) and, past the queue's receive limit, go to
 * its dead-letter queue. Each record carries the receive count SQS would give: local-aws-sqs also
 * counts a ChangeMessageVisibility as a receive, so the pollers of a queue count receives
 * themselves (`receives`).
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { MessageQueue, QueueMessage } from "../../shared/domain/message-queue.ts";

/** Options of {@link startSqsPoller}. */
export interface PollerOptions {
  readonly queue: MessageQueue;
  readonly queueArn: string;
  readonly handler: (event: SQSEvent, context: Context) => Promise<unknown>;
  /** Messages per invocation. @default 10 */
  readonly batchSize?: number;
  /** Parallel pollers, as Lambda scales out. @default 1 */
  readonly concurrency?: number;
  /** Name used in the fake Lambda context. @default "local-function" */
  readonly functionName?: string;
  /** Receives so far by message id, shared by every poller of the queue. @default this poller's own */
  readonly receives?: Map<string, number>;
}

/** A running poller. */
export interface SqsPoller {
  /** Invocations so far and their outcomes. */
  readonly stats: { invocations: number; records: number; failures: number; handlerErrors: number };
  stop(): Promise<void>;
}

/** A Lambda context for local invocations (Powertools reads its fields). */
export function localLambdaContext(functionName: string): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "1024",
    awsRequestId: crypto.randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, 60_000 - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The Lambda event record for a received message. */
function recordOf(message: QueueMessage, receiveCount: number, queueArn: string): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: "local",
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: "us-east-1",
  };
}

/** Starts polling; `stop()` waits for invocations in progress. */
export function startSqsPoller(options: PollerOptions): SqsPoller {
  const stats = { invocations: 0, records: 0, failures: 0, handlerErrors: 0 };
  const receives = options.receives ?? new Map<string, number>();
  let running = true;
  const loop = async () => {
    while (running) {
      const messages = await options.queue.receive({ max: options.batchSize ?? 10 }).catch(() => []);
      if (messages.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        continue;
      }
      const records: SQSRecord[] = messages.map((message) => {
        const receiveCount = (receives.get(message.messageId) ?? 0) + 1;
        receives.set(message.messageId, receiveCount);
        return recordOf(message, receiveCount, options.queueArn);
      });
      stats.invocations++;
      stats.records += records.length;
      let keep = new Set<string>();
      try {
        const response = await options.handler(
          { Records: records },
          localLambdaContext(options.functionName ?? "local-function"),
        );
        const failures = (response as SQSBatchResponse | undefined)?.batchItemFailures ?? [];
        keep = new Set(failures.map((failure) => failure.itemIdentifier));
      } catch {
        stats.handlerErrors++;
        keep = new Set(records.map((record) => record.messageId));
      }
      stats.failures += keep.size;
      const done = records.filter((record) => !keep.has(record.messageId));
      for (const record of done) receives.delete(record.messageId);
      if (done.length > 0) {
        // A failed delete only means the messages come back: at-least-once, as in Lambda.
        await options.queue.delete(done.map((record) => record.receiptHandle)).catch(() => undefined);
      }
    }
  };
  const workers = Array.from({ length: options.concurrency ?? 1 }, () => loop());
  return {
    stats,
    async stop() {
      running = false;
      await Promise.allSettled(workers);
    },
  };
}

/** The Lambda record of a received message. */
function recordWithQueueCount(message: QueueMessage, queueArn: string): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: String(message.receiveCount),
      SentTimestamp: String(message.sentAt),
      SenderId: "local",
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: "us-east-1",
  };
}

/**
 * A poller that gathers up to `maxRecords` messages per invocation, as an event source mapping
 * with a large batch size and a batching window does: it receives until it has them all, the
 * queue is drained, or `gatherMs` passed since the first one.
 */
export function startGatheringPoller(options: {
  queue: MessageQueue;
  queueArn: string;
  handler: (event: SQSEvent, context: Context) => Promise<unknown>;
  maxRecords: number;
  gatherMs: number;
}): SqsPoller {
  const stats = { invocations: 0, records: 0, failures: 0, handlerErrors: 0 };
  let running = true;
  const gather = async (): Promise<QueueMessage[]> => {
    const messages: QueueMessage[] = [];
    const started = Date.now();
    while (running && messages.length < options.maxRecords && Date.now() - started < options.gatherMs) {
      const max = Math.min(10, options.maxRecords - messages.length);
      const received = await options.queue.receive({ max }).catch(() => []);
      if (received.length === 0) {
        if (messages.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      messages.push(...received);
    }
    return messages;
  };
  const loop = async () => {
    while (running) {
      const messages = await gather();
      if (messages.length === 0) continue;
      const records = messages.map((message) => recordWithQueueCount(message, options.queueArn));
      stats.invocations++;
      stats.records += records.length;
      let keep = new Set(records.map((r) => r.messageId));
      try {
        const response = (await options.handler(
          { Records: records },
          localLambdaContext("async-submit"),
        )) as SQSBatchResponse;
        keep = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      } catch {
        stats.handlerErrors++;
      }
      stats.failures += keep.size;
      const done = records.filter((record) => !keep.has(record.messageId)).map((r) => r.receiptHandle);
      if (done.length > 0) await options.queue.delete(done).catch(() => undefined);
    }
  };
  const worker = loop();
  return {
    stats,
    async stop() {
      running = false;
      await worker;
    },
  };
}
