/**
 * Changing or undoing a stored label: its own reviewer within the change window, an admin at any
 * time. Each is appended to the record's history and announced with "Decision Review Revised";
 * an undo sends the item back to the review queue. A label two reviewers settled is changed only
 * by an admin (its reviewer may still undo it, which asks for two labels again).
 */
import { publishedEvent } from "../../domain/contracts/events.ts";
import { batchesOf, type DecisionRecord } from "../../domain/decision-record.ts";
import type { RecordKey, ReviewWrite } from "../../domain/decision-store.ts";
import { DetailType } from "../../domain/events.ts";
import { isAdmin, type Reviewer } from "../../domain/review/review.ts";
import { settleRevision } from "../batch-progress.ts";
import {
  checkLabel,
  entryOf,
  guarded,
  loadRecord,
  nowOf,
  type ReviewDependencies,
  ReviewError,
  type ReviewOutcome,
  requireReviewer,
} from "./review-common.ts";

/** Whether `reviewer` may change or undo the stored label of `record` at `now`. */
export function mayRevise(record: DecisionRecord, reviewer: Reviewer, now: Date, windowMs: number): boolean {
  if (record.status !== "reviewed") return false;
  if (isAdmin(reviewer)) return true;
  const reviewedAt = Date.parse(record.reviewedAt ?? "");
  return record.reviewerId === reviewer.id && now.getTime() - reviewedAt <= windowMs;
}

/**
 * Changes (`label` given) or undoes (`label` undefined: the item waits for review again) a
 * stored label: its own reviewer within the change window, an admin at any time.
 */
export async function reviseLabel(
  key: RecordKey,
  label: string | undefined,
  reviewer: Reviewer,
  deps: ReviewDependencies,
  attempt = 0,
): Promise<ReviewOutcome> {
  requireReviewer(reviewer);
  const { record, policy } = await loadRecord(key, deps);
  if (label !== undefined) checkLabel(policy, label);
  const now = nowOf(deps);
  if (label !== undefined && record.status === "reviewed" && record.label === label) {
    // Already the label: a retried change. Send the revision event if the first call could not.
    if (record.revisionEventPublished === false) await publishRevised(record, deps);
    return { stored: false, final: true, record };
  }
  if (record.status !== "reviewed")
    throw new ReviewError(
      `${key.itemId} has no stored label to ${label === undefined ? "undo" : "change"}`,
      "conflict",
    );
  if (!mayRevise(record, reviewer, now, deps.timings.changeWindowMs))
    throw new ReviewError(
      record.reviewerId === reviewer.id
        ? `the change window for ${key.itemId} has closed; ask an admin`
        : `${key.itemId} was labelled by ${record.reviewer}: only they (within the window) or an admin may change it`,
      "forbidden",
    );
  // Two reviewers settled it (a sample reviewed twice): one of them alone does not overturn that.
  if (label !== undefined && !isAdmin(reviewer) && (record.firstReview || record.disputed))
    throw new ReviewError(
      `${key.itemId} was settled by two reviewers: undo it to have it reviewed twice again, or ask an admin`,
      "forbidden",
    );
  const previousLabel = record.label!;
  const action = label === undefined ? "undo" : "change";
  const entry = entryOf(reviewer, now, { action, previousLabel, ...(label === undefined ? {} : { label }) });
  const revision = { revisionEventPublished: false, lastRevision: entry };
  const write: ReviewWrite =
    label === undefined
      ? {
          from: "reviewed",
          to: "pending_review",
          reviewVersion: record.reviewVersion ?? 0,
          // Back where it was in the queue: a certification sample at the time it was queued.
          set: record.queuedAt ? { ...revision, queuedAt: record.queuedAt } : revision,
          remove: [
            "label",
            "reviewer",
            "reviewerId",
            "reviewedAt",
            "reviewEventPublished",
            "firstReview",
            "disputed",
          ],
          entry,
        }
      : {
          from: "reviewed",
          to: "reviewed",
          reviewVersion: record.reviewVersion ?? 0,
          set: {
            ...revision,
            label,
            reviewer: reviewer.name,
            reviewerId: reviewer.id,
            reviewedAt: now.toISOString(),
          },
          entry,
        };
  const written = await guarded(attempt, key, write, now, deps, () =>
    reviseLabel(key, label, reviewer, deps, attempt + 1),
  );
  if ("stored" in written) return written;
  await publishRevised(written, deps);
  return { stored: true, final: label !== undefined, record: (await deps.store.get(key)) ?? written };
}

/** Sends "Decision Revised" for the record's last revision and marks it sent. */
export async function publishRevised(record: DecisionRecord, deps: ReviewDependencies): Promise<void> {
  const revision = record.lastRevision;
  if (!revision) return;
  const { action, previousLabel } = revision;
  if ((action !== "change" && action !== "undo") || previousLabel === undefined)
    throw new RangeError(`${record.itemId}: a revision (${action}) without its previous label`);
  await deps.publisher.publish([
    publishedEvent(
      DetailType.revised,
      `revised|${record.itemId}|${record.policyId}@${record.policyVersion}|r${record.reviewVersion ?? 0}`,
      {
        itemId: record.itemId,
        policyId: record.policyId,
        policyVersion: record.policyVersion,
        action,
        previousLabel,
        label: revision.label ?? null,
        reviewer: revision.reviewerName,
        reviewerId: revision.reviewerId,
        revisedAt: revision.at,
      },
    ),
  ]);
  await deps.store.transition(record, record.status, record.status, { revisionEventPublished: true });
  if (deps.batches)
    for (const batchId of batchesOf(record))
      await settleRevision(deps.batches, batchId, record.itemId, revision.label);
}
