/**
 * What becomes of a queued item the decide function could not settle on this receive.
 *
 * - The endpoint was overloaded: no failure of the item. It goes back to its queue hidden for a
 *   wait that starts at the one the fleet lets it expect (the capacity follower's reading, when
 *   recent) and grows with its receive count (`shared/domain/backoff/overload-backoff.ts`), and nothing is
 *   counted against it, however long the overload lasts.
 * - The item is decided and only its event waits for a publish lease another write holds
 *   (`EventOwedError`): no failure of the item either. It comes back after its queue's visibility
 *   timeout (longer than the lease) and sends the event then, unless the lease holder did. Counted,
 *   a duplicate could be dead-lettered while its twin sends the event: one item in two states.
 * - Anything else is a failure of the item: noted with its reason (replay filters on it) and
 *   counted; below the limit the item comes back after its queue's visibility timeout; at the
 *   limit it is moved to the dead-letter queue its queue's redrive policy names, its batch counting
 *   it there.
 *
 * SQS's own receive limit stays a backstop for a handler that never reports (a crash every
 * time): on the receive that reaches it, SQS would move the item next, so it is dead-lettered
 * here, with its reason, whatever the failure.
 */

import { type OverloadBackoff, overloadVisibilitySeconds } from "../domain/backoff/overload-backoff.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { EndpointOverloadedError, EventOwedError } from "../domain/errors.ts";
import type { QueueDirectory } from "../domain/message-queue.ts";
import { type BatchDependencies, settleDeadLetter } from "./batch-progress.ts";
import type { ExpectedWait } from "./expected-wait.ts";
import { batchOf } from "./message-body.ts";

/** One receive of a message, as the event source mapping delivered it. */
export interface Delivery {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** 1 on the first receive. */
  readonly receiveCount: number;
  /** The queue it came from. */
  readonly sourceArn: string;
}

/** The limits, from the topology (`DECIDE_QUEUES`) unless the environment says otherwise. */
export interface DeliveryLimits {
  /** Failures of the item itself before it is dead-lettered. */
  readonly maxItemFailures: number;
  /** The queue's own `maxReceiveCount`, the backstop. */
  readonly maxReceiveCount: number;
  readonly overloadBackoff: OverloadBackoff;
}

/** What {@link settleFailedDelivery} needs. */
export interface FailedDeliveryDependencies {
  readonly store: Pick<DecisionStore, "noteFailure">;
  readonly queues: QueueDirectory;
  readonly limits: DeliveryLimits;
  /** Batch progress, when batches are tracked here. */
  readonly batches?: BatchDependencies;
  /** Uniform in [0, 1): spreads the waits. @default Math.random */
  readonly draw?: () => number;
  /** The wait the fleet lets an item expect (`expected-wait.ts`). @default none: the fixed schedule */
  readonly expectedWait?: ExpectedWait;
}

/** What became of the item. */
export type FailedDelivery =
  | { readonly outcome: "waiting"; readonly visibilitySeconds: number }
  | { readonly outcome: "retrying"; readonly failures: number }
  | { readonly outcome: "owed" }
  | { readonly outcome: "dead_lettered"; readonly reason: string };

/** The reason noted for a failure: the error's name and message. */
export function failureReason(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Settles a delivery whose decision failed with `error`. The caller reports it back to the event
 * source mapping unless the outcome is `dead_lettered` (then it is done with, and deleted).
 */
export async function settleFailedDelivery(
  delivery: Delivery,
  error: unknown,
  deps: FailedDeliveryDependencies,
): Promise<FailedDelivery> {
  const overloaded = error instanceof EndpointOverloadedError;
  const lastReceive = delivery.receiveCount >= deps.limits.maxReceiveCount;
  if (overloaded && !lastReceive) {
    const draw = (deps.draw ?? Math.random)();
    const expected = deps.expectedWait ? await deps.expectedWait() : undefined;
    const visibilitySeconds = overloadVisibilitySeconds(
      delivery.receiveCount,
      deps.limits.overloadBackoff,
      draw,
      expected,
    );
    const source = await deps.queues.queue(delivery.sourceArn);
    await source.changeVisibility(delivery.receiptHandle, visibilitySeconds);
    return { outcome: "waiting", visibilitySeconds };
  }
  if (error instanceof EventOwedError && !lastReceive) return { outcome: "owed" };
  const reason = lastReceive
    ? `${failureReason(error)} (receive ${delivery.receiveCount}, the queue's limit)`
    : failureReason(error);
  const failures = overloaded ? 0 : await deps.store.noteFailure(delivery.messageId, reason);
  if (failures < deps.limits.maxItemFailures && !lastReceive) return { outcome: "retrying", failures };
  const deadLetters = await deps.queues.deadLetterQueueOf(delivery.sourceArn);
  // A queue without a dead-letter queue keeps its items: they come back until they pass.
  if (!deadLetters) return { outcome: "retrying", failures };
  // Counted in its batch first: should the move fail, the item comes back and is moved again.
  const batchId = batchOf(delivery.body);
  if (deps.batches && batchId) await settleDeadLetter(deps.batches, batchId, delivery.body, reason);
  const deadLetterId = await deadLetters.send(delivery.body);
  // Noted again under its id in the dead-letter queue, where replay and status look it up.
  await deps.store.noteFailure(deadLetterId, reason).catch(() => undefined);
  return { outcome: "dead_lettered", reason };
}
