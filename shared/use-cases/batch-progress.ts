/**
 * A batch's progress after intake: each accepted item that reaches a terminal state is counted
 * once (decided auto or human, refused, dead-lettered; a dead letter decided after a replay moves
 * to decided), each label on an escalated item once. Once every accepted item is terminal, the
 * batch files step (`batch-files.ts`, a function of its own) is asked to write the results and
 * errors files and announce "Batch Completed"; once every escalated item has its label, to
 * rewrite them and announce "Batch Reviewed". A change after completion (a label given, changed
 * or undone, a dead letter decided) marks the files stale and asks for one rewrite
 * `BATCH_FILES.rewriteDelaySeconds` later, however many changes follow in between.
 *
 * Called from the decide path (every outcome, including "already decided", so that a crash between
 * counting and asking is repaired by the redelivery) and from the review path. Nothing here reads
 * the members: the decide and review functions never hold a batch.
 */
import {
  type BatchMember,
  type BatchRecord,
  type BatchStore,
  isComplete,
  isReviewed,
  memberOf,
  type RequestsBatchFiles,
} from "../domain/batch.ts";
import type { Clock } from "../domain/clock.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import { BATCH_FILES } from "../domain/topology.ts";

/** What batch progress needs. */
export interface BatchDependencies {
  readonly batches: BatchStore;
  /** Starts the batch files step. */
  readonly files: RequestsBatchFiles;
  /** The clock: set once where the handlers are composed (a test sets its own). */
  readonly now: Clock;
}

/** Where a batch's files live in the object store. */
export function batchKeys(batchId: string) {
  return {
    /** The lines intake refused, with their line numbers and reasons (JSONL). */
    rejected: `batches/${batchId}/rejected.jsonl`,
    results: `batches/${batchId}/results.jsonl`,
    errors: `batches/${batchId}/errors.jsonl`,
  };
}

/** Counts a decided (or refused) record's item in its batch, then asks for its files if it is done. */
export async function settleRecord(
  deps: BatchDependencies,
  batchId: string,
  record: DecisionRecord,
): Promise<void> {
  await settleMember(deps, batchId, memberOf(record));
}

/** Counts a member's state (once), then asks for the files if the batch is done. */
export async function settleMember(
  deps: BatchDependencies,
  batchId: string,
  member: BatchMember,
): Promise<void> {
  const after = await deps.batches.recordMember(batchId, member);
  // A dead letter decided after the batch was complete: its files must show it.
  if (after && isComplete(after)) await filesChanged(deps, after);
  await requestIfDue(deps, after ?? (await deps.batches.getBatch(batchId)));
}

/** Counts a message that is about to be dead-lettered (its item id read from the raw body). */
export async function settleDeadLetter(
  deps: BatchDependencies,
  batchId: string,
  body: string,
  problem: string,
): Promise<void> {
  let itemId = "";
  let policyId = "";
  try {
    const item = JSON.parse(body) as { id?: unknown; policy?: unknown };
    itemId = typeof item.id === "string" ? item.id : "";
    policyId = typeof item.policy === "string" ? item.policy : "";
  } catch {
    // Intake sent only valid JSON; a body that is not cannot be a batch member.
  }
  if (!itemId) return;
  await settleMember(deps, batchId, { itemId, policyId, policyVersion: 0, state: "dead_lettered", problem });
}

/** Counts a reviewer's label on an escalated member (once), then asks for "Batch Reviewed" when it is due. */
export async function settleLabel(
  deps: BatchDependencies,
  batchId: string,
  itemId: string,
  label: string,
): Promise<void> {
  const after = await deps.batches.recordLabel(batchId, itemId, label);
  if (after && isComplete(after)) await filesChanged(deps, after);
  await requestIfDue(deps, after ?? (await deps.batches.getBatch(batchId)));
}

/** Follows a changed or undone label on a batch item (its results file shows the current label). */
export async function settleRevision(
  deps: BatchDependencies,
  batchId: string,
  itemId: string,
  label: string | undefined,
): Promise<void> {
  const after = await deps.batches.reviseLabel(batchId, itemId, label);
  if (after && isComplete(after)) await filesChanged(deps, after);
}

/**
 * Asks the files step for what the batch's counts call for and it has not announced yet: the
 * files and "Batch Completed", or the rewrite with the labels and "Batch Reviewed". The step
 * itself claims each announcement, so a repeated request does nothing twice.
 */
export async function requestIfDue(deps: BatchDependencies, batch: BatchRecord | undefined): Promise<void> {
  if (!batch || !isComplete(batch)) return;
  const reviewedDue = batch.counts.human > 0 && isReviewed(batch) && !batch.reviewedEventPublished;
  if (!batch.completedEventPublished || reviewedDue) await deps.files.request(batch.batchId);
}

/**
 * A change the files must show: one delayed rewrite per stale period, however many changes come.
 * Before "Batch Completed" went out the completion's own write is due anyway; marking the files
 * stale still matters then, since a change during that write leaves them stale and the step asks
 * for the rewrite itself.
 */
async function filesChanged(deps: BatchDependencies, batch: BatchRecord): Promise<void> {
  const now = deps.now();
  const opened = await deps.batches.markFilesStale(batch.batchId, now);
  if (opened && batch.completedEventPublished)
    await deps.files.request(batch.batchId, BATCH_FILES.rewriteDelaySeconds);
}
