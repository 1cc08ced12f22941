/**
 * A batch's progress after intake: each accepted item that reaches a terminal state is counted
 * once (decided auto or human, refused, dead-lettered; a dead letter decided after a replay moves
 * to decided), each label on an escalated item once; when every accepted item is terminal the
 * results and errors files are written and "Batch Completed" goes out, and when every escalated
 * item has its label the results file is rewritten with the labels and "Batch Reviewed" goes out.
 *
 * Called from the decide path (every outcome, including "already decided", so that a crash between
 * counting and completing is repaired by the redelivery) and from the review path. One worker at a
 * time announces a phase, under an expiring claim (a crashed announcer's claim lapses and the
 * redelivery of its message takes over); events go out at least once with a stable id, and the
 * files are rewritten whole, so a repeat writes the same bytes.
 */
import {
  type BatchMember,
  type BatchRecord,
  type BatchStore,
  isComplete,
  isReviewed,
  memberOf,
} from "../domain/batch.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import { DetailType, type PublishesEvents, pipelineEvent } from "../domain/events.ts";
import type { ObjectStore } from "../domain/object-store.ts";

/** What batch progress needs. */
export interface BatchDependencies {
  readonly batches: BatchStore;
  readonly objects: ObjectStore;
  readonly publisher: PublishesEvents;
  readonly now?: () => Date;
  /** How long the worker announcing a batch holds the right to. @default 60000 */
  readonly announceLeaseMs?: number;
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

/** Counts a decided (or refused) record's item in its batch, then completes the batch if it is done. */
export async function settleRecord(
  deps: BatchDependencies,
  batchId: string,
  record: DecisionRecord,
): Promise<void> {
  await settleMember(deps, batchId, memberOf(record));
}

/** Counts a member's state (once), then completes the batch if it is done. */
export async function settleMember(
  deps: BatchDependencies,
  batchId: string,
  member: BatchMember,
): Promise<void> {
  const after = await deps.batches.recordMember(batchId, member);
  // A dead letter decided after the batch was announced: its files are written again to show it.
  if (after?.status === "completed" && after.completedEventPublished) await writeFiles(deps, after);
  await finishIfDone(deps, after ?? (await deps.batches.getBatch(batchId)));
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

/** Counts a reviewer's label on an escalated member (once), then announces a fully reviewed batch. */
export async function settleLabel(
  deps: BatchDependencies,
  batchId: string,
  itemId: string,
  label: string,
): Promise<void> {
  const after = await deps.batches.recordLabel(batchId, itemId, label);
  await finishIfDone(deps, after ?? (await deps.batches.getBatch(batchId)));
}

/** Follows a changed or undone label on a batch item (its results file shows the current label). */
export async function settleRevision(
  deps: BatchDependencies,
  batchId: string,
  itemId: string,
  label: string | undefined,
): Promise<void> {
  const after = await deps.batches.reviseLabel(batchId, itemId, label);
  if (after?.status === "completed" && after.completedEventPublished) await writeFiles(deps, after);
}

/** Writes the files and sends the events a batch's counts call for and it has not sent yet. */
export async function finishIfDone(deps: BatchDependencies, batch: BatchRecord | undefined): Promise<void> {
  if (!batch || !isComplete(batch)) return;
  const now = (deps.now ?? (() => new Date()))();
  const keys = batchKeys(batch.batchId);
  const lease = deps.announceLeaseMs ?? 60_000;
  const claim = (phase: "completed" | "reviewed") =>
    deps.batches.claimAnnouncement(batch.batchId, phase, now.getTime(), now.getTime() + lease);
  if (!batch.completedEventPublished && (await claim("completed"))) {
    await writeFiles(deps, batch);
    const completedAt = batch.completedAt ?? now.toISOString();
    await deps.batches.updateBatch(batch.batchId, {
      status: "completed",
      completedAt,
      results: { results: keys.results, errors: keys.errors },
    });
    await deps.publisher.publish([
      pipelineEvent(DetailType.batchCompleted, `batch-completed|${batch.batchId}`, {
        batchId: batch.batchId,
        policyId: batch.policyId,
        source: batch.source,
        counts: batch.counts,
        results: keys.results,
        errors: keys.errors,
        completedAt,
      }),
    ]);
    await deps.batches.updateBatch(batch.batchId, { completedEventPublished: true });
  }
  if (
    batch.counts.human > 0 &&
    isReviewed(batch) &&
    !batch.reviewedEventPublished &&
    (await claim("reviewed"))
  ) {
    await writeFiles(deps, batch);
    await deps.publisher.publish([
      pipelineEvent(DetailType.batchReviewed, `batch-reviewed|${batch.batchId}`, {
        batchId: batch.batchId,
        policyId: batch.policyId,
        counts: batch.counts,
        results: keys.results,
        reviewedAt: now.toISOString(),
      }),
    ]);
    await deps.batches.updateBatch(batch.batchId, { reviewedEventPublished: true });
  }
}

/**
 * The results file (one line per decided item: id, route, chosen option, distribution, reason,
 * status, and the label once reviewed) and the errors file (intake's refused lines, then the
 * items the pipeline refused or dead-lettered).
 */
async function writeFiles(deps: BatchDependencies, batch: BatchRecord): Promise<void> {
  const keys = batchKeys(batch.batchId);
  const members = await deps.batches.members(batch.batchId);
  const results = members
    .filter((m) => m.state === "auto" || m.state === "human")
    .map((m) =>
      JSON.stringify({
        id: m.itemId,
        route: m.route,
        chosen: m.chosen,
        distribution: m.distribution,
        reason: m.reason,
        status: m.status,
        ...(m.label !== undefined ? { label: m.label } : {}),
      }),
    );
  const refused = await readText(deps.objects, keys.rejected);
  const errors = [
    ...refused.split("\n").filter((line) => line.trim()),
    ...members
      .filter((m) => m.state === "failed" || m.state === "dead_lettered")
      .map((m) => JSON.stringify({ id: m.itemId, stage: m.state, problem: m.problem ?? "" })),
  ];
  await deps.objects.put(keys.results, results.length ? `${results.join("\n")}\n` : "");
  await deps.objects.put(keys.errors, errors.length ? `${errors.join("\n")}\n` : "");
}

/** An object's text, or "" when there is none. */
export async function readText(objects: ObjectStore, key: string): Promise<string> {
  const stream = await objects.read(key);
  if (!stream) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
