/**
 * The labels reviewers gave a policy version, as calibration rows: what recalibration fits, with
 * the reviewer agreement on audit samples and the allowed-token mass of each labelled decision.
 * Each row says how it came to be labelled and its chance of having been
 * (`shared/domain/calibration/certificate/label-selection.ts`), so that a certificate weights it by what it
 * stands for, and its group of near-duplicates (`group-key.ts`: a reviewer's mark, the producer's
 * group, else the item's normalised text). A cascade's record also gives its second model's
 * answer, where that model was asked (what a cascade's calibration and certificate read).
 */

import { UNLABELLED } from "../../domain/calibration/certificate/certificate-units.ts";
import type { CertificationFrame } from "../../domain/calibration/certificate/certification-sample.ts";
import type { CascadeRow } from "../../domain/calibration/certificate/certified-items.ts";
import { groupKeyOf } from "../../domain/calibration/certificate/group-key.ts";
import { selectionOf, thresholdFloor } from "../../domain/calibration/certificate/label-selection.ts";
import type { MassRow } from "../../domain/calibration/off-options.ts";
import { rescoredReading, tierReading } from "../../domain/cascade.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import { type ReviewerAgreement, reviewerAgreement } from "../../domain/review/review.ts";
import { type ReviewerAccuracy, reviewerAccuracy } from "../../domain/review/review-gold.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";

/** The reviewed decisions of a policy version, as calibration rows. */
export interface ReviewedLabels {
  readonly rows: CascadeRow[];
  readonly problems: { line: number; reason: string }[];
  readonly agreement: ReviewerAgreement;
  /** The allowed-token mass of each labelled decision, right or wrong by its raw choice. */
  readonly masses: MassRow[];
  /** The certification samples drawn from the version (up to `until`). */
  readonly frames: CertificationFrame[];
  /**
   * The lowest threshold a certificate may test: 0 when every automatic decision could be
   * audited, else the lowest frame's minimum (infinite with none): see `thresholdFloor`.
   */
  readonly floor: number;
  /**
   * Decisions drawn for a certification sample or an audit by `until` and not labelled by then,
   * as rows whose label is `UNLABELLED`: a certificate counts each as wrong wherever it would
   * automate it (a drawn item never silently leaves its sample). Never fitted on.
   */
  readonly missing: CascadeRow[];
  /**
   * Each reviewer's accuracy on the version's gold items (waiting, or settled in the window): what
   * the labels themselves are worth. Gold items are never rows.
   */
  readonly reviewers: ReviewerAccuracy[];
  /** Decisions of the version waiting for a label, by how they were chosen. */
  readonly waiting: { readonly escalation: number; readonly audit: number; readonly certification: number };
}

/**
 * Gold items (`gold-items.ts`) are left out everywhere: the lead chose them for their known
 * answers, so their labels measure reviewers, never the model.
 *
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
  const read: DecisionRecord[] = [];
  const gold: DecisionRecord[] = [];
  // The reviewed list is sorted by label time: only the labels since `since` are read.
  for await (const record of store.reviewedSince(policy.id, since ?? "0"))
    if (record.policyVersion === policy.version) (record.gold ? gold : read).push(record);
  const records = read.filter((r) => until === undefined || (r.reviewedAt ?? r.updatedAt) <= until);
  // In the order they were decided, so the rows (and the problems' line numbers) read the same on every run.
  records.sort((a, b) =>
    decidedOrder(a) < decidedOrder(b) ? -1 : decidedOrder(a) > decidedOrder(b) ? 1 : 0,
  );
  const pending = await pendingOf(store, policy, gold);
  // Every frame drawn by `until`, even one whose samples were all labelled after it.
  const frames = framesOf([...read, ...pending], until);
  const floor = thresholdFloor(policy, frames);
  // Without audits, an automatic decision after the last draw had no chance of a label: the
  // labels speak only for the decisions up to it.
  const lastDraw =
    floor > 0 && frames.length
      ? frames
          .map((f) => f.drawnAt)
          .sort()
          .at(-1)!
      : undefined;
  const rows: CascadeRow[] = [];
  const problems: { line: number; reason: string }[] = [];
  const first = (record: DecisionRecord) => tierReading(record, 0) ?? {};
  const rowOf = (record: DecisionRecord, logits: readonly number[], label: number): CascadeRow => {
    const { modelSha256, promptVersion } = first(record);
    return {
      logits,
      label,
      group: groupKeyOf(record),
      key: record.itemId,
      ...selectionOf(record, policy, frames),
      ...(modelSha256 ? { modelSha256 } : {}),
      ...(promptVersion ? { promptVersion } : {}),
      ...secondOf(record, ids.length, until),
    };
  };
  for (const [i, record] of records.entries()) {
    const label = ids.indexOf(record.label ?? "");
    const answer = first(record);
    if (label < 0 || answer.rawLogits?.length !== ids.length) {
      problems.push({
        line: i + 1,
        reason: `${record.itemId}: label "${record.label}" or its logits do not fit ${policy.id}@${policy.version}`,
      });
      continue;
    }
    if (lastDraw !== undefined && record.createdAt > lastDraw) continue;
    rows.push(rowOf(record, answer.rawLogits, label));
  }
  const missing = missingOf([...pending, ...read], records, until).flatMap((r) => {
    const logits = first(r).rawLogits;
    return logits?.length === ids.length ? [rowOf(r, logits, UNLABELLED)] : [];
  });
  const masses = massesOf(records, ids);
  const disputed = pending.filter(
    (r) => r.disputed === true && (since === undefined || (r.reviewedAt ?? r.updatedAt) >= since),
  );
  const waiting = { escalation: 0, audit: 0, certification: 0 };
  for (const r of pending) waiting[selectionOf(r, policy, frames).kind as keyof typeof waiting]++;
  const agreement = reviewerAgreement([...records, ...disputed]);
  const reviewers = reviewerAccuracy(gold);
  return { rows, problems, agreement, masses, frames, floor, missing, waiting, reviewers };
}

/** The allowed-token mass of each labelled decision, right or wrong by its first model's choice. */
function massesOf(records: readonly DecisionRecord[], ids: readonly string[]): MassRow[] {
  return records
    .map((r) => ({ r, answer: tierReading(r, 0) ?? {} }))
    .filter(({ r, answer }) => typeof answer.allowedTokenMass === "number" && ids.includes(r.label ?? ""))
    .map(({ r, answer }) => ({
      mass: answer.allowedTokenMass as number,
      correct: answer.chosen === r.label,
    }));
}

/**
 * The decisions drawn for a certification sample or an audit by `until` and not labelled by then
 * (waiting still, or labelled only after it), each once, in the order they were decided: an audit
 * sample left waiting counts against a certificate as a certification draw does, never as undrawn.
 */
function missingOf(
  candidates: readonly DecisionRecord[],
  labelled: readonly DecisionRecord[],
  until: string | undefined,
): DecisionRecord[] {
  const labelledBy = new Set(labelled.map((r) => r.itemId));
  const drawn = new Map(
    candidates
      .filter(
        (r) => !labelledBy.has(r.itemId) && (r.certification !== undefined || r.reason === "audit_sample"),
      )
      .filter((r) => until === undefined || (r.certification?.drawnAt ?? r.createdAt) <= until)
      .map((r) => [r.itemId, r]),
  );
  return [...drawn.values()].sort((a, b) => (decidedOrder(a) < decidedOrder(b) ? -1 : 1));
}

/** The certification frames the records carry, drawn at or before `until` (each once). */
function framesOf(records: readonly DecisionRecord[], until: string | undefined): CertificationFrame[] {
  const frames = new Map<string, CertificationFrame>();
  for (const r of records) {
    const c = r.certification;
    if (!c || (until !== undefined && c.drawnAt > until) || frames.has(c.sample)) continue;
    const { band: _band, inclusionProbability: _pi, ...frame } = c;
    frames.set(c.sample, frame);
  }
  return [...frames.values()];
}

const decidedOrder = (r: DecisionRecord) => `${r.createdAt}|${r.itemId}`;

/**
 * The version's decisions waiting for a label (escalations, audit and certification samples);
 * gold items waiting go to `gold` instead.
 */
async function pendingOf(
  store: DecisionStore,
  policy: Policy,
  gold: DecisionRecord[],
): Promise<DecisionRecord[]> {
  const pending: DecisionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.pageReviewQueue({
      policyIds: [policy.id],
      limit: TABLE_INDEXES.batchGetKeys,
      countCap: 0,
      ...(cursor ? { cursor } : {}),
    });
    for (const r of page.records) if (r.policyVersion === policy.version) (r.gold ? gold : pending).push(r);
    cursor = page.next;
  } while (cursor);
  return pending;
}

/**
 * The second model's answer on a cascade's record, as a row's fields: the one it gave when the
 * item was decided, else a re-score of it made by `until` (`rescore-later-tiers.ts`); none where
 * it was never asked.
 */
function secondOf(record: DecisionRecord, options: number, until: string | undefined): Partial<CascadeRow> {
  const second = tierReading(record, 1) ?? rescoredReading(record, 1, until);
  if (second?.rawLogits?.length !== options) return {};
  return {
    secondLogits: second.rawLogits,
    ...(second.modelSha256 ? { secondModelSha256: second.modelSha256 } : {}),
    ...(second.promptVersion ? { secondPromptVersion: second.promptVersion } : {}),
  };
}
