/**
 * A reviewer marks an item a near-duplicate of another: the item joins the other's group (its
 * unit key, `group-key.ts`), so that a certificate counts the two once. The product groups copies
 * whose normalised text matches; this is for the copies it cannot see (a reworded post, an image
 * with another caption). Near-duplicates share one label, so two items labelled differently are
 * refused: marking must never hide a wrong answer inside a group of right ones.
 */
import { groupKeyOf } from "../../domain/calibration/certificate/group-key.ts";
import type { RecordKey } from "../../domain/decision-store.ts";
import type { Reviewer } from "../../domain/review/review.ts";
import {
  guarded,
  loadRecord,
  nowOf,
  type ReviewDependencies,
  ReviewError,
  type ReviewOutcome,
  requireReviewer,
} from "./review-common.ts";

/** Puts the item `key` into the group of item `of` (same policy version). */
export async function markDuplicate(
  key: RecordKey,
  of: string,
  reviewer: Reviewer,
  deps: ReviewDependencies,
  attempt = 0,
): Promise<ReviewOutcome> {
  requireReviewer(reviewer);
  if (of.trim() === "" || of === key.itemId)
    throw new ReviewError(
      `of: name another item of ${key.policyId}@${key.policyVersion} that ${key.itemId} duplicates`,
      "invalid",
    );
  const { record } = await loadRecord(key, deps);
  const { record: other } = await loadRecord({ ...key, itemId: of }, deps);
  if (record.label !== undefined && other.label !== undefined && record.label !== other.label)
    throw new ReviewError(
      `${key.itemId} is labelled "${record.label}" and ${of} "${other.label}": near-duplicates share one label, so they cannot be one group`,
      "conflict",
    );
  const group = groupKeyOf(other);
  if (groupKeyOf(record) === group) return { stored: false, final: record.status === "reviewed", record };
  const now = nowOf(deps);
  const written = await guarded(
    attempt,
    key,
    { from: record.status, to: record.status, reviewVersion: record.reviewVersion ?? 0, set: { group } },
    now,
    deps,
    () => markDuplicate(key, of, reviewer, deps, attempt + 1),
  );
  if ("stored" in written) return written;
  return { stored: true, final: written.status === "reviewed", record: written };
}
