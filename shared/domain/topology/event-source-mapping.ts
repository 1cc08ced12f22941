/**
 * The shape of each SQS event source mapping, as plain data that both sides read: the CDK app's
 * `QueueConsumer` (`infra/constructs/queue-consumer.ts`) builds its event sources from it and the
 * local mode's one poller (`infra/local/sqs/sqs-poller.ts`) takes the same values, so the two cannot
 * drift apart. Every mapping reports batch item failures (only the records a handler names come
 * back): that is how every consumer here works, not a setting of one consumer.
 *
 * Not re-exported by `../topology.ts`: this file reads that one.
 */
import { DECIDE_FUNCTION, TARGET_FUNCTION } from "../topology.ts";
import { ASYNC_LANE } from "./async.ts";
import { BATCH_FILES } from "./batch.ts";

/** One mapping from a queue to a function. */
export interface EventSourceMapping {
  /** Most records per invocation (one SQS receive takes at most 10; more are gathered). */
  readonly batchSize: number;
  /** How long the mapping gathers records before it invokes. @default none */
  readonly maxBatchingWindowSeconds?: number;
  /** Concurrent invocations it may start (2 to 1,000). @default the function's */
  readonly maxConcurrency?: number;
}

/** How the decide function's lanes are sized (`decideConcurrency` in `capacity-plan.ts`). */
export interface DecideSizes {
  /** Records per invocation, both lanes. */
  readonly batchSize: number;
  /** Concurrent intake invocations (the capacity follower moves it). */
  readonly intake: number;
  /** Concurrent batch-lane invocations. */
  readonly batch: number;
}

/** The decide function on the intake queue. */
export function decideIntakeMapping(sizes: Pick<DecideSizes, "batchSize" | "intake">): EventSourceMapping {
  return {
    batchSize: sizes.batchSize,
    maxBatchingWindowSeconds: DECIDE_FUNCTION.maxBatchingWindowSeconds,
    maxConcurrency: sizes.intake,
  };
}

/** The decide function on the batch lane's queue (when the batch lane runs on the real-time endpoint). */
export function decideBatchMapping(sizes: Pick<DecideSizes, "batchSize" | "batch">): EventSourceMapping {
  return {
    batchSize: sizes.batchSize,
    maxBatchingWindowSeconds: DECIDE_FUNCTION.maxBatchingWindowSeconds,
    maxConcurrency: sizes.batch,
  };
}

/**
 * The async lane's submit function on a lane's queue: an object's worth of records per
 * invocation (`asyncItemsPerObject`), gathered over the window.
 */
export function asyncSubmitMapping(itemsPerObject: number): EventSourceMapping {
  return {
    batchSize: itemsPerObject,
    maxBatchingWindowSeconds: ASYNC_LANE.submit.maxBatchingWindowSeconds,
    maxConcurrency: ASYNC_LANE.submit.maxConcurrency,
  };
}

/** The mappings whose numbers do not depend on how the endpoint is provisioned. */
export const EVENT_SOURCE_MAPPINGS = {
  /** The auto-action and review intake functions, each on its rule's queue. */
  target: { batchSize: TARGET_FUNCTION.batchSize, maxConcurrency: TARGET_FUNCTION.maxConcurrency },
  /** The batch files step on its queue: one batch per invocation. */
  batchFiles: { batchSize: BATCH_FILES.batchSize, maxConcurrency: BATCH_FILES.maxConcurrency },
  /** The async lane's result function on the notifications' queue: one object per invocation. */
  asyncResults: { batchSize: 1, maxConcurrency: ASYNC_LANE.results.maxConcurrency },
} as const satisfies Record<string, EventSourceMapping>;
