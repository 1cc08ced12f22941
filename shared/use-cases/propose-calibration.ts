/**
 * Recalibration that closes the loop: the labels reviewers gave since a policy version was
 * calibrated become, once there are enough, a proposed next version (temperature, prior, offsets,
 * threshold, prediction sets, baseline) with its report, written where the team reviews it (S3
 * deployed, `calibration-out/` locally) and announced by "Calibration Proposed". Nothing is
 * applied: production changes only when someone applies the proposal (`decide calibrate
 * --apply-proposal`) and deploys. Run by the scheduled Recalibrate function and by
 * `decide calibrate --from-table --propose`.
 */
import { auditPolicy } from "../domain/audit/policy-audit.ts";
import { type CalibrationSummary, calibratePolicy } from "../domain/calibration/calibrate.ts";
import { type MassRow, proposeMassFloor } from "../domain/calibration/off-options.ts";
import { renderReport } from "../domain/calibration/report.ts";
import type { LabelledLogits } from "../domain/calibration/temperature.ts";
import type { ThresholdGoal } from "../domain/calibration/threshold.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { DetailType, type PublishesEvents, pipelineEvent } from "../domain/events.ts";
import type { ObjectStore } from "../domain/object-store.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { type ReviewerAgreement, reviewerAgreement } from "../domain/review.ts";
import { auditRecords, windowStart } from "./audit-estimate.ts";

/** Fewest labels calibration can fit at all (the fit needs folds). */
export const MIN_FIT_LABELS = 10;
/** Labels below which a proposal still keeps 20% of items with people (the threshold's floor rule). */
export const FULL_TRUST_LABELS = 200;

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
 * `calibratedAt` when it has one): the labels that version has not been fitted on.
 */
export async function reviewedLabels(
  store: DecisionStore,
  policy: Policy,
  since?: string,
): Promise<ReviewedLabels> {
  const ids = policy.options.map((o) => o.id);
  const records = (await store.listSince("reviewed", "1970-01-01T00:00:00.000Z")).filter(
    (r) =>
      r.policyId === policy.id &&
      r.policyVersion === policy.version &&
      (since === undefined || (r.reviewedAt ?? r.updatedAt) >= since),
  );
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
    rows.push({ logits: record.rawLogits, label, group: record.itemId });
  }
  const masses = records
    .filter((r) => typeof r.allowedTokenMass === "number" && ids.includes(r.label ?? ""))
    .map((r) => ({ mass: r.allowedTokenMass as number, correct: r.chosen === r.label }));
  return { rows, problems, agreement: reviewerAgreement(records), masses };
}

/** What a run did for one policy. */
export type ProposalOutcome =
  | {
      readonly policyId: string;
      readonly version: number;
      readonly status: "not_enough_labels";
      readonly labels: number;
      readonly needed: number;
    }
  | {
      readonly policyId: string;
      readonly version: number;
      readonly status: "proposed" | "already_proposed";
      readonly labels: number;
      readonly proposedVersion: number;
      /** Where the proposed policy, its report and its summary were written. */
      readonly keys: { readonly policy: string; readonly report: string; readonly summary: string };
      readonly summary?: CalibrationSummary;
    };

/** What {@link proposeCalibrations} needs. */
export interface ProposalDependencies {
  readonly policies: PolicyRegistry;
  readonly store: DecisionStore;
  readonly objects: ObjectStore;
  /** Announces each new proposal; none locally when no bus is named. */
  readonly publisher?: PublishesEvents;
  readonly now?: () => Date;
}

/** Settings of a run. */
export interface ProposalSettings {
  /** Labels needed before a proposal is made (at least {@link MIN_FIT_LABELS}). @default 200 */
  readonly minLabels?: number;
  readonly goal?: ThresholdGoal;
  /** Key prefix of the proposals ("calibration/" in the bucket, "" in a local folder). @default "" */
  readonly prefix?: string;
  /** Only this policy. */
  readonly policyId?: string;
}

/**
 * For each policy (or the one named), proposes its next version from the labels gathered since it
 * was calibrated, when there are at least `minLabels`. Idempotent: the proposal's keys name the
 * version and the label count, so a rerun with no new label finds it and announces nothing.
 */
export async function proposeCalibrations(
  deps: ProposalDependencies,
  settings: ProposalSettings = {},
): Promise<ProposalOutcome[]> {
  const minLabels = Math.max(MIN_FIT_LABELS, settings.minLabels ?? FULL_TRUST_LABELS);
  const goal = settings.goal ?? { kind: "target-accuracy", accuracy: 0.97 };
  const ids = settings.policyId ? [settings.policyId] : deps.policies.ids();
  const outcomes: ProposalOutcome[] = [];
  // The live error rate from audits goes in each report (one read of the audit samples per run).
  const audits = await auditRecords(deps.store, windowStart((deps.now ?? (() => new Date()))()));
  for (const id of ids) {
    const policy = deps.policies.current(id);
    if (!policy) throw new RangeError(`unknown policy "${id}" (known: ${deps.policies.ids().join(", ")})`);
    const labelled = await reviewedLabels(deps.store, policy, policy.calibratedAt);
    const labels = labelled.rows.length;
    if (labels < minLabels) {
      outcomes.push({
        policyId: id,
        version: policy.version,
        status: "not_enough_labels",
        labels,
        needed: minLabels,
      });
      continue;
    }
    const folder = `${settings.prefix ?? ""}${id}/v${policy.version + 1}-from-${labels}-labels`;
    const keys = {
      policy: `${folder}/policy.json`,
      report: `${folder}/report.html`,
      summary: `${folder}/summary.json`,
    };
    const base = { policyId: id, version: policy.version, labels, proposedVersion: policy.version + 1, keys };
    if ((await deps.objects.list(keys.policy)).some((o) => o.key === keys.policy)) {
      outcomes.push({ ...base, status: "already_proposed" });
      continue;
    }
    const now = (deps.now ?? (() => new Date()))();
    const summary = calibratePolicy(policy, labelled.rows, { goal });
    const offOptions = labelled.masses.length > 0 ? proposeMassFloor(labelled.masses) : undefined;
    const proposed: Policy = {
      ...summary.proposedPolicy,
      ...(offOptions?.floor !== undefined ? { minAllowedTokenMass: offOptions.floor } : {}),
      calibratedAt: now.toISOString(),
    };
    // The policy file last, after the event: its presence marks the proposal as made, so a run
    // that stops before it announces again (same event id) instead of never.
    const live = auditPolicy(id, audits, deps.policies, windowStart(now));
    await deps.objects.put(keys.report, renderReport(summary, labelled.agreement, offOptions, live));
    await deps.objects.put(
      keys.summary,
      `${JSON.stringify({ ...summary, reviewerAgreement: labelled.agreement, ...(offOptions ? { offOptions } : {}), skipped: labelled.problems }, null, 2)}\n`,
    );
    await deps.publisher?.publish([
      pipelineEvent(
        DetailType.calibrationProposed,
        `calibration-proposed|${id}@${policy.version}|${labels}`,
        {
          policyId: id,
          policyVersion: policy.version,
          proposedVersion: proposed.version,
          labels,
          ece: { raw: summary.raw.ece, calibrated: summary.calibrated.ece },
          temperature: { current: policy.temperature, proposed: proposed.temperature },
          autoThreshold: { current: policy.autoThreshold, proposed: proposed.autoThreshold },
          automatedShare: summary.threshold.coverage,
          automatedAccuracy: Number.isFinite(summary.threshold.automatedAccuracy)
            ? summary.threshold.automatedAccuracy
            : null,
          notes: summary.threshold.notes,
          location: keys,
          proposedAt: now.toISOString(),
        },
      ),
    ]);
    await deps.objects.put(keys.policy, `${JSON.stringify(proposed, null, 2)}\n`);
    outcomes.push({ ...base, status: "proposed", summary });
  }
  return outcomes;
}
