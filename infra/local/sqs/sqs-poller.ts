/**
 * The local stand-in for one SQS event source mapping, the one every local consumer goes through
 * (the decide pollers, the rule targets, the batch files step, the async lane's submit and result
 * functions). It takes the mapping's shape as the CDK app's `QueueConsumer` does
 * (`shared/domain/topology/event-source-mapping.ts`) and does what the Lambda service does:
 * receive up to the batch size (gathering over several receives when the batch size is above 10
 * or a gathering window is asked for), invoke, delete only the records not reported in
 * `batchItemFailures` (all of them kept when the handler throws). Kept messages come back after
 * the visibility timeout (or the one the handler set) and, past the queue's receive limit, go to
 * its dead-letter queue.
 *
 * The receive count: each record carries the one SQS would give, counted here by every poller of
 * the queue together, never the local SQS's own. local-aws-sqs also counts a
 * ChangeMessageVisibility as a receive (SQS does not), so its count grows twice per overload
 * return of the decide path and per hold-back of the submit function; the decide function reads
 * the count (its overload backoff, the failure notes at the receive limit). A count kept here
 * restarts with the process, as the local SQS's does: the journal puts a kept message back as
 * sent anew.
 */
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { MessageQueue, QueueMessage } from "../../../shared/domain/message-queue.ts";
import type { EventSourceMapping } from "../../../shared/domain/topology/event-source-mapping.ts";

/** Options of {@link startSqsPoller}. */
export interface PollerOptions {
  readonly queue: MessageQueue;
  readonly queueArn: string;
  readonly handler: (event: SQSEvent, context: Context) => Promise<unknown>;
  /** The mapping as deployed: its batch size is the records per invocation here too. */
  readonly mapping: EventSourceMapping;
  /**
   * Parallel pollers, as Lambda scales out, at most the mapping's concurrency (fewer locally: one
   * machine). @default 1
   */
  readonly pollers?: number;
  /**
   * How long a batch is gathered once its first record arrived: the local mode's stand-in for the
   * mapping's window, which it does not wait out (a gathering also ends when the queue has
   * nothing more). @default 0, one receive per invocation
   */
  readonly gatherMs?: number;
  /** Name used in the fake Lambda context. @default "local-function" */
  readonly functionName?: string;
}

/** A running poller. */
export interface SqsPoller {
  /** The mapping it stands in for. */
  readonly mapping: EventSourceMapping;
  /** Invocations so far and their outcomes. */
  readonly stats: { invocations: number; records: number; failures: number; handlerErrors: number };
  stop(): Promise<void>;
}

/** Most messages one SQS receive returns. */
const RECEIVE_MAX = 10;

/** How long an idle poller waits before it receives again. */
const IDLE_MS = 25;

/** Receives so far by message id, per queue: every poller of a queue counts together. */
const receivesByQueue = new WeakMap<MessageQueue, Map<string, number>>();

/** The receive counts of `queue`'s messages. */
function receivesOf(queue: MessageQueue): Map<string, number> {
  const known = receivesByQueue.get(queue);
  if (known) return known;
  const receives = new Map<string, number>();
  receivesByQueue.set(queue, receives);
  return receives;
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

/**
 * One batch: receives until it holds the batch size, the queue has nothing more, or `gatherMs`
 * passed since its first record; empty when the poller stops first.
 */
async function gather(options: PollerOptions, running: () => boolean): Promise<QueueMessage[]> {
  const messages: QueueMessage[] = [];
  let firstAt = 0;
  while (running() && messages.length < options.mapping.batchSize) {
    const max = Math.min(RECEIVE_MAX, options.mapping.batchSize - messages.length);
    const received = await options.queue.receive({ max }).catch(() => []);
    if (received.length === 0) {
      if (messages.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      continue;
    }
    if (messages.length === 0) firstAt = Date.now();
    messages.push(...received);
    if (Date.now() - firstAt >= (options.gatherMs ?? 0)) break;
  }
  return messages;
}

/** Starts polling; `stop()` waits for invocations in progress. */
export function startSqsPoller(options: PollerOptions): SqsPoller {
  const stats = { invocations: 0, records: 0, failures: 0, handlerErrors: 0 };
  const receives = receivesOf(options.queue);
  let running = true;
  const loop = async () => {
    while (running) {
      const messages = await gather(options, () => running);
      if (messages.length === 0) continue;
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
  const workers = Array.from({ length: options.pollers ?? 1 }, () => loop());
  return {
    mapping: options.mapping,
    stats,
    async stop() {
      running = false;
      await Promise.allSettled(workers);
    },
  };
}
