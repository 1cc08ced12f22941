/**
 * What becomes of an async item that was not decided, and of a whole object that failed:
 *
 * - an item whose answer failed (a line that breaks the contract, a 5xx for that item, no line at
 *   all) is counted as a failure of the item (under its lane and id) and submitted again, until
 *   `maxItemFailures`; then it is dead-lettered with the reason;
 * - an item scored under a policy version that is no longer live is submitted again, counting
 *   as no failure;
 * - a dead letter goes to its lane's dead-letter queue (so `decide replay --from batch` brings it
 *   back to the lane), counted in its batch first, with the reason noted under its id there, as
 *   the decide function does for its own dead letters.
 */
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { MessageQueue } from "../../domain/message-queue.ts";
import type { AsyncSource } from "../../domain/topology.ts";
import { type BatchDependencies, settleDeadLetter } from "../batch-progress.ts";
import { batchOf } from "../message-body.ts";

/** A lane's queue and its dead-letter queue. */
export interface LaneQueues {
  readonly queue: MessageQueue;
  readonly deadLetters: MessageQueue;
}

/** What settling failed items needs. */
export interface AsyncFailureDependencies {
  readonly store: Pick<DecisionStore, "noteFailure" | "latest">;
  /** Each lane the async endpoint serves. */
  readonly lanes: Partial<Record<AsyncSource, LaneQueues>>;
  readonly batches?: BatchDependencies;
  /** Failures of one item before it is dead-lettered. */
  readonly maxItemFailures: number;
}

/** What became of a failed item. */
export type FailedItemOutcome = "resubmitted" | "dead_lettered";

/** The lane's queues, or an error naming the lane. */
function laneOf(deps: Pick<AsyncFailureDependencies, "lanes">, source: AsyncSource): LaneQueues {
  const lane = deps.lanes[source];
  if (!lane) throw new Error(`no queues for the ${source} lane`);
  return lane;
}

/** The id the failures of an async item are counted under. */
export function asyncFailureKey(source: AsyncSource, body: string): string {
  let id = "";
  try {
    const value = (JSON.parse(body) as { id?: unknown }).id;
    if (typeof value === "string") id = value;
  } catch {
    // Counted under the body's start: an unparseable item never gets this far (submit rejects it).
  }
  return `async|${source}|${id || body.slice(0, 100)}`;
}

/** Counts a failure of the item; submits it again below the limit, dead-letters it at the limit. */
export async function failItem(
  source: AsyncSource,
  body: string,
  reason: string,
  deps: AsyncFailureDependencies,
): Promise<FailedItemOutcome> {
  const failures = await deps.store.noteFailure(asyncFailureKey(source, body), reason);
  if (failures < deps.maxItemFailures) {
    await laneOf(deps, source).queue.send(body);
    return "resubmitted";
  }
  await deadLetterItem(source, body, `${reason} (failure ${failures} of the item)`, deps);
  return "dead_lettered";
}

/** Submits the item again (a new policy version came out), counting no failure. */
export async function resubmitItem(
  source: AsyncSource,
  body: string,
  deps: Pick<AsyncFailureDependencies, "lanes">,
): Promise<void> {
  await laneOf(deps, source).queue.send(body);
}

/** Moves the item to its lane's dead-letter queue with `reason`, counted in its batch first. */
export async function deadLetterItem(
  source: AsyncSource,
  body: string,
  reason: string,
  deps: AsyncFailureDependencies,
): Promise<void> {
  const batchId = batchOf(body);
  // Counted first: should the send fail, the notification comes back and this runs again.
  if (deps.batches && batchId) await settleDeadLetter(deps.batches, batchId, body, reason);
  const deadLetterId = await laneOf(deps, source).deadLetters.send(body);
  await deps.store.noteFailure(deadLetterId, reason);
}
