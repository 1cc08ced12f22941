/**
 * The labels reviewers gave a policy version, as calibration rows: what recalibration fits, with
 * the reviewer agreement on audit samples and the allowed-token mass of each labelled decision.
 */
import type { MassRow } from "../domain/calibration/off-options.ts";
import type { LabelledLogits } from "../domain/calibration/temperature.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { type ReviewerAgreement, reviewerAgreement } from "../domain/review.ts";
import { TABLE_INDEXES } from "../domain/topology.ts";

/** The reviewed decisions of a policy version, as calibration rows. */
export interface ReviewedLabels {
  readonly rows: LabelledLogits[];
  readonly problems: { line: number; reason: string }[];
  readonly agreement: ReviewerAgreement;
  /** The allowed-token mass of each labelled decision, right or wrong by its raw choice. */
  readonly masses: MassRow[];
}

/**
 * Reviewed decisions of `policy`'s current version, labelled at or after `since` (the version's
 * `calibratedAt` when it has one) and, when given, at or before `until` (a certificate's labels
 * read back): the labels that version has not been fitted on. Each row names
 * the model and prompt layout that scored it (a certificate is bound to them). Reviewer agreement
 * also counts audit samples still pending because their two reviewers disagreed: such a sample
 * was reviewed twice, and did not agree.
 */
export async function reviewedLabels(
  store: DecisionStore,
  policy: Policy,
  since?: string,
  until?: string,
): Promise<ReviewedLabels> {
  const ids = policy.options.map((o) => o.id);
  const records: DecisionRecord[] = [];
  // The reviewed list is sorted by label time: only the labels since `since` are read.
  for await (const record of store.reviewedSince(policy.id, since ?? "0"))
    if (
      record.policyVersion === policy.version &&
      (until === undefined || (record.reviewedAt ?? record.updatedAt) <= until)
    )
      records.push(record);
  // In the order they were decided, so the rows (and the problems' line numbers) read the same on every run.
  records.sort((a, b) =>
    decidedOrder(a) < decidedOrder(b) ? -1 : decidedOrder(a) > decidedOrder(b) ? 1 : 0,
  );
  const disputed = await disputedSamples(store, policy, since);
  const rows: LabelledLogits[] = [];
  const problems: { line: number; reason: string }[] = [];
  for (const [i, record] of records.entries()) {
    const label = ids.indexOf(record.label ?? "");
    if (label < 0 || record.rawLogits?.length !== ids.length) {
      problems.push({
        line: i + 1,
        reason: `${record.itemId}: label "${record.label}" or its logits do not fit ${policy.id}@${policy.version}`,
      });
      continue;
    }
    rows.push({
      logits: record.rawLogits,
      label,
      group: record.itemId,
      ...(record.modelSha256 ? { modelSha256: record.modelSha256 } : {}),
      ...(record.promptVersion ? { promptVersion: record.promptVersion } : {}),
    });
  }
  const masses = records
    .filter((r) => typeof r.allowedTokenMass === "number" && ids.includes(r.label ?? ""))
    .map((r) => ({ mass: r.allowedTokenMass as number, correct: r.chosen === r.label }));
  return { rows, problems, agreement: reviewerAgreement([...records, ...disputed]), masses };
}

const decidedOrder = (r: DecisionRecord) => `${r.createdAt}|${r.itemId}`;

/** The policy version's audit samples still waiting because their two reviewers disagreed. */
async function disputedSamples(
  store: DecisionStore,
  policy: Policy,
  since?: string,
): Promise<DecisionRecord[]> {
  const disputed: DecisionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.pageReviewQueue({
      policyIds: [policy.id],
      limit: TABLE_INDEXES.batchGetKeys,
      countCap: 0,
      ...(cursor ? { cursor } : {}),
    });
    for (const r of page.records)
      if (
        r.disputed === true &&
        r.policyVersion === policy.version &&
        (since === undefined || (r.reviewedAt ?? r.updatedAt) >= since)
      )
        disputed.push(r);
    cursor = page.next;
  } while (cursor);
  return disputed;
}
