/**
 * Recalibration that closes the loop: the labels reviewers gave since a policy version was
 * calibrated become, once there are enough, a proposed next version (temperature, prior, offsets,
 * threshold, prediction sets, baseline, and a certificate when asked) with its report, written
 * where the team reviews it (S3 deployed, `calibration-out/` locally) and announced by
 * "Calibration Proposed". Never worse than today: when no candidate beats the version as it
 * stands and the threshold stays, nothing is proposed (`no_change`); and a proposal is checked
 * with apply's own rules before it is written or announced. Nothing is applied: production
 * changes only when someone applies the proposal (`decide calibrate --apply-proposal`) and
 * deploys. Run by the scheduled Recalibrate function and by `decide calibrate --from-table --propose`.
 * With `--max-auto-error`, a version with a registered plan (`--plan --request N`) gets the plan's
 * proposal: its maps kept, the threshold its sample certifies (`registered-certification.ts`).
 */

import { type CalibrationSummary, calibratePolicy } from "../../domain/calibration/calibrate.ts";
import { registeredSummary } from "../../domain/calibration/certificate/registered-proposal.ts";
import { type LiveDecision, liveBaseline } from "../../domain/calibration/live-baseline.ts";
import { proposeMassFloor } from "../../domain/calibration/off-options.ts";
import { checkProposal } from "../../domain/calibration/proposal-check.ts";
import { MIN_FIT_LABELS } from "../../domain/calibration/ranges.ts";
import type { ThresholdGoal } from "../../domain/calibration/threshold.ts";
import type { Clock } from "../../domain/clock.ts";
import { publishedEvent } from "../../domain/contracts/events.ts";
import type { DecisionStore } from "../../domain/decision-store.ts";
import { DetailType, type PublishesEvents } from "../../domain/events.ts";
import type { ObjectStore } from "../../domain/object-store.ts";
import { type Policy, PolicyError, parsePolicy } from "../../domain/policy/policy.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { DRIFT } from "../../domain/topology.ts";
import { renderReport } from "../../reports/calibration-report.ts";
import { recentAudit, windowStart } from "../audit-estimate.ts";
import { type ReviewedLabels, reviewedLabels } from "../review/reviewed-labels.ts";
import { latestRegisteredProposal } from "./registered-certification.ts";

/** A registered plan's proposal (`registered-certification.ts`). */
type Registered = NonNullable<Awaited<ReturnType<typeof latestRegisteredProposal>>>;

/** Labels below which a proposal still keeps 20% of items with people (the threshold's floor rule). */
export const FULL_TRUST_LABELS = 200;

/** What a run did for one policy. */
export type ProposalOutcome =
  | {
      readonly policyId: string;
      readonly version: number;
      readonly status: "not_enough_labels";
      readonly labels: number;
      readonly needed: number;
      /** Whether the version was ever calibrated (its labels are counted since then). */
      readonly calibrated: boolean;
    }
  | {
      readonly policyId: string;
      readonly version: number;
      /** Nothing calibration owns would change: `no change: …` with the figures. */
      readonly status: "no_change";
      readonly labels: number;
      readonly verdict: string;
      readonly summary: CalibrationSummary;
    }
  | {
      readonly policyId: string;
      readonly version: number;
      /** The fit gave a version apply would refuse: nothing written, nothing announced. */
      readonly status: "refused";
      readonly labels: number;
      readonly reasons: string[];
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
  /** The clock: set once where the handlers are composed (a test sets its own). */
  readonly now: Clock;
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

/** The fields whose change makes a new version worth proposing (sets and baseline follow them). */
const MEANINGFUL = new Set([
  "temperature",
  "prior",
  "optionBias",
  "autoThreshold",
  "minAllowedTokenMass",
  "certificate",
]);

/** Why apply would refuse `proposed` (its schema, then its calibration-only rule), if it would. */
function refusalsOf(current: Policy, proposed: Policy): string[] {
  try {
    parsePolicy(proposed, `${proposed.id}@${proposed.version}`);
  } catch (error) {
    if (error instanceof PolicyError) return [error.message];
    throw error;
  }
  return checkProposal(current, proposed).refusals;
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
  const ids = settings.policyId ? [settings.policyId] : deps.policies.ids();
  const outcomes: ProposalOutcome[] = [];
  for (const id of ids) {
    const policy = deps.policies.current(id);
    if (!policy) throw new RangeError(`unknown policy "${id}" (known: ${deps.policies.ids().join(", ")})`);
    // The labels given up to now: a certificate names this window, so it can be read back.
    const now = deps.now();
    const labelled = await reviewedLabels(deps.store, policy, policy.calibratedAt, now.toISOString());
    const labels = labelled.rows.length;
    const base = { policyId: id, version: policy.version, labels };
    // A version with a registered plan is certified by that plan's sample alone, never by other labels.
    const registered =
      settings.goal?.kind === "max-auto-error"
        ? await latestRegisteredProposal(deps.store, policy, now)
        : undefined;
    const needed = registered ? MIN_FIT_LABELS : minLabels;
    if (labels < needed) {
      outcomes.push({
        ...base,
        status: "not_enough_labels",
        needed,
        calibrated: policy.calibratedAt !== undefined,
      });
      continue;
    }
    outcomes.push(await proposeOne(policy, labelled, { ...deps, now: () => now }, settings, registered));
  }
  return outcomes;
}

/** Fits one policy and writes (and announces) its proposal unless nothing would change. */
async function proposeOne(
  policy: Policy,
  labelled: ReviewedLabels,
  deps: ProposalDependencies,
  settings: ProposalSettings,
  registered?: Registered,
): Promise<ProposalOutcome> {
  const labels = labelled.rows.length;
  const base = { policyId: policy.id, version: policy.version, labels };
  // A certified target names its folder: another target is another proposal, never "already proposed".
  const goal = settings.goal ?? { kind: "target-accuracy", accuracy: 0.97 };
  const target =
    (goal.kind === "max-auto-error" ? `-max-error-${goal.maxError}-at-${goal.confidence}` : "") +
    (registered ? `-sample-${registered.sample.sample}` : "");
  const folder = `${settings.prefix ?? ""}${policy.id}/v${policy.version + 1}-from-${labels}-labels${target}`;
  const keys = {
    policy: `${folder}/policy.json`,
    report: `${folder}/report.html`,
    summary: `${folder}/summary.json`,
  };
  if ((await deps.objects.list(keys.policy)).some((o) => o.key === keys.policy))
    return { ...base, status: "already_proposed", proposedVersion: policy.version + 1, keys };
  const now = deps.now();
  const labelSource = {
    kind: "table" as const,
    policyVersion: policy.version,
    since: policy.calibratedAt ?? null,
    until: now.toISOString(),
  };
  // A registered plan's proposal keeps the version's maps: the fit only gives the report its metrics.
  const fit = calibratePolicy(policy, labelled.rows, {
    goal: registered ? { kind: "target-accuracy", accuracy: 0.97 } : goal,
    now,
    labelSource,
    thresholdFloor: labelled.floor,
    unlabelled: labelled.missing,
  });
  const summary = registered ? registeredSummary(fit, registered) : fit;
  const offOptions =
    labelled.masses.length > 0 && !registered ? proposeMassFloor(labelled.masses) : undefined;
  const fitted: Policy = {
    ...summary.proposedPolicy,
    ...(offOptions?.floor !== undefined ? { minAllowedTokenMass: offOptions.floor } : {}),
    calibratedAt: now.toISOString(),
  };
  // The drift baseline from live decisions read under the proposed version, not from the labels.
  const baseline = liveBaseline(fitted, await recentDecisions(deps.store, policy, now));
  const proposed: Policy = baseline ? { ...fitted, baseline } : fitted;
  const written = { ...summary, baseline: proposed.baseline ?? summary.baseline, proposedPolicy: proposed };
  const reasons = refusalsOf(policy, proposed);
  if (reasons.length > 0) return { ...base, status: "refused", reasons };
  if (!checkProposal(policy, proposed).changes.some((c) => MEANINGFUL.has(c.field)))
    return { ...base, status: "no_change", verdict: summary.comparison.verdict, summary };
  // The policy file last, after the event: its presence marks the proposal as made, so a run
  // that stops before it announces again (same event id) instead of never.
  // The live error rate from the policy's audit samples goes in the report beside the fit.
  const live = await recentAudit(deps, policy.id, now);
  await deps.objects.put(
    keys.report,
    renderReport(policy, written, labelled.agreement, offOptions, live, labelled.reviewers),
  );
  await deps.objects.put(
    keys.summary,
    `${JSON.stringify({ ...written, reviewerAgreement: labelled.agreement, reviewerAccuracy: labelled.reviewers, ...(offOptions ? { offOptions } : {}), skipped: labelled.problems }, null, 2)}\n`,
  );
  await deps.publisher?.publish([proposedEvent(policy, proposed, summary, keys, now)]);
  await deps.objects.put(keys.policy, `${JSON.stringify(proposed, null, 2)}\n`);
  return {
    ...base,
    status: "proposed",
    proposedVersion: proposed.version,
    keys,
    summary: written,
  };
}

/** The current version's decisions of the last audit window, a bounded sample spread over it. */
async function recentDecisions(store: DecisionStore, policy: Policy, now: Date): Promise<LiveDecision[]> {
  const sample = await store.sampleDecisions({
    policyId: policy.id,
    policyVersion: policy.version,
    since: windowStart(now),
    until: now.toISOString(),
    size: DRIFT.sampleSize,
    slices: DRIFT.slices,
  });
  return sample.flatMap((r) =>
    r.rawLogits
      ? [{ itemId: r.itemId, rawLogits: r.rawLogits, allowedTokenMass: r.allowedTokenMass ?? null }]
      : [],
  );
}

/** "Calibration Proposed" for one proposal. */
function proposedEvent(
  policy: Policy,
  proposed: Policy,
  summary: CalibrationSummary,
  location: { policy: string; report: string; summary: string },
  now: Date,
) {
  const certificate = proposed.certificate;
  return publishedEvent(
    DetailType.calibrationProposed,
    `calibration-proposed|${policy.id}@${policy.version}|${summary.labels}`,
    {
      policyId: policy.id,
      policyVersion: policy.version,
      proposedVersion: proposed.version,
      labels: summary.labels,
      ece: { raw: summary.current.ece, calibrated: summary.calibrated.ece },
      temperature: { current: policy.temperature, proposed: proposed.temperature },
      autoThreshold: { current: policy.autoThreshold, proposed: proposed.autoThreshold },
      automatedShare: summary.threshold.coverage,
      automatedAccuracy: Number.isFinite(summary.threshold.automatedAccuracy)
        ? summary.threshold.automatedAccuracy
        : null,
      notes: [summary.comparison.verdict, ...summary.threshold.notes],
      ...(certificate
        ? {
            certificate: {
              maxError: certificate.maxError,
              confidence: certificate.confidence,
              threshold: certificate.threshold,
              bound: certificate.bound,
            },
          }
        : {}),
      location,
      proposedAt: now.toISOString(),
    },
  );
}
