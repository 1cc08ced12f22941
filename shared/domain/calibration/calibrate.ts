/**
 * Calibrating one policy from labelled decisions: every candidate calibration compared out of fold
 * with the policy as it stands (`candidates.ts`), the auto threshold (from the risk–coverage curve,
 * or certified: `certificate.ts`), conformal prediction sets, and the proposed next policy version
 * (`proposal.ts`). Pure: callers bring the rows and write the outputs.
 */
import type { LabelSource } from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import { softmax } from "../probability.ts";
import {
  baselineOf,
  type Certification,
  certify,
  type MetricSet,
  metricSet,
  type ThresholdRow,
  thresholdTable,
} from "./calibrate-parts.ts";
import { type CandidateComparison, compareCandidates } from "./candidates.ts";
import type { CascadeCalibration } from "./cascade-calibration.ts";
import { withCascade } from "./cascade-choice.ts";
import { topAutomatable } from "./certificate/certified-items.ts";
import { requiredCertificateProblem } from "./certificate/registered-kind.ts";
import { evaluateSets, fitConformal } from "./conformal.ts";
import { calibratedProbabilities, mapOf } from "./map.ts";
import {
  type Binning,
  type CoveragePoint,
  confusionMatrix,
  type ReliabilityBin,
  reliabilityBins,
  riskCoverage,
} from "./metrics.ts";
import { type ProposalParts, proposeVersion, roundMap } from "./proposal.ts";
import { provenanceOf } from "./provenance.ts";
import { MIN_FIT_LABELS } from "./ranges.ts";
import type { LabelledLogits } from "./temperature.ts";
import { chooseThreshold, type ThresholdChoice, type ThresholdGoal } from "./threshold.ts";

/** Options of {@link calibratePolicy}. */
export interface CalibrateOptions {
  readonly goal: ThresholdGoal;
  /** When the fit is made (a certificate's date). */
  readonly now: Date;
  /** @default 10 */
  readonly bins?: number;
  /** @default "equal-width" */
  readonly binning?: Binning;
  /** @default 5 */
  readonly folds?: number;
  /** Target coverage of conformal sets. @default 0.9 */
  readonly conformalCoverage?: number;
  /** A label-free prior (from content-free inputs): the "prior" candidate. */
  readonly prior?: readonly number[];
  /** Where the rows came from, written into a certificate so that it can be checked on them. */
  readonly labelSource?: LabelSource;
  /** The lowest threshold the labels may certify (`label-selection.ts`, `thresholdFloor`). @default 0 */
  readonly thresholdFloor?: number;
  /**
   * Items drawn for a certification sample and not labelled (label `UNLABELLED`): the certificate
   * counts each as wrong where it would automate it; nothing is fitted on them. @default none
   */
  readonly unlabelled?: readonly LabelledLogits[];
}

/** Too few labelled rows to fit anything. */
export class TooFewLabelsError extends RangeError {
  override name = "TooFewLabelsError";
  constructor(
    readonly labels: number,
    readonly needed: number,
  ) {
    super(`calibration needs at least ${needed} labelled items, got ${labels}`);
  }
}

/** Everything the report and the JSON summary show. */
export interface CalibrationSummary {
  readonly policy: { readonly id: string; readonly version: number };
  readonly options: readonly string[];
  readonly labels: number;
  /** softmax of the raw logits (temperature 1, no prior, no offsets). */
  readonly raw: MetricSet;
  /** The policy as it stands. */
  readonly current: MetricSet;
  /** The proposed calibration, out of fold (the current one's when nothing changes). */
  readonly calibrated: MetricSet;
  /** The proposed version's temperature: the one figure the command, report and file show. */
  readonly temperature: number;
  /** Every candidate against the policy as it stands, and the verdict. */
  readonly comparison: CandidateComparison;
  readonly reliability: { readonly current: ReliabilityBin[]; readonly calibrated: ReliabilityBin[] };
  readonly riskCoverage: CoveragePoint[];
  /** Share automated and automated accuracy at round thresholds (calibrated). */
  readonly thresholdTable: ThresholdRow[];
  readonly threshold: ThresholdChoice;
  /** With `--max-auto-error`: the certification and its curve (points with their exact bounds). */
  readonly certificate?: Certification;
  readonly conformal: {
    minProbability: number;
    targetCoverage: number;
    heldOutCoverage: number;
    meanSetSize: number;
  };
  readonly confusion: number[][];
  /** For drift checks: what calibrated decisions looked like. */
  readonly baseline: { meanConfidence: number; escalationRate: number; optionMix: number[] };
  readonly proposedPolicy: Policy;
  /** A two-model cascade's calibration with `--max-auto-error`: both thresholds, certified together. */
  readonly cascade?: CascadeCalibration;
}

/**
 * A policy that requires a certificate automates nothing under a version that carries none, or
 * one that is not pre-registered: say so.
 */
function withCertificateNote(policy: Policy, proposed: Policy, threshold: ThresholdChoice): ThresholdChoice {
  if (!policy.requireCertificate) return threshold;
  const kind = requiredCertificateProblem(policy, proposed.certificate);
  const note = proposed.certificate
    ? kind && `this version would automate nothing: its ${kind}`
    : `${policy.id} requires a certificate and this version carries none, so it would automate nothing: certify it with a plan (decide calibrate --policy ${policy.id} --plan --request N)`;
  return note ? { ...threshold, notes: [...threshold.notes, note] } : threshold;
}

/** The certification part of a proposal: the result with the labels and what scored them. */
function certifiedPart(
  result: Certification | undefined,
  rows: readonly LabelledLogits[],
  options: CalibrateOptions,
): Pick<ProposalParts, "certified"> {
  if (!result) return {};
  const source = options.labelSource ? { source: options.labelSource } : {};
  return { certified: { result, rows, ...provenanceOf(rows), at: options.now, ...source } };
}

/** Calibrates `policy` from labelled logits (labels are option indices). */
export function calibratePolicy(
  policy: Policy,
  rows: readonly LabelledLogits[],
  options: CalibrateOptions,
): CalibrationSummary {
  if (rows.length < MIN_FIT_LABELS) throw new TooFewLabelsError(rows.length, MIN_FIT_LABELS);
  const bins = options.bins ?? 10;
  const binning = options.binning ?? "equal-width";
  const folds = options.folds ?? 5;
  const { comparison, outOfFold: calibrated } = compareCandidates(policy, rows, {
    folds,
    prior: options.prior,
  });
  const chosen = [comparison.current, ...comparison.candidates].find((c) => c.name === comparison.chosen)!;
  // A new fit is rounded into the ranges apply accepts; an unchanged map stays exactly as it is.
  const map = comparison.change ? roundMap(chosen.map) : mapOf(policy);
  const goal = options.goal;
  const floor = options.thresholdFloor ?? 0;
  // The certificate's rows: the labels, and every drawn item left unlabelled (as wrong).
  const sample = [...rows, ...(options.unlabelled ?? [])];
  const certified = goal.kind === "max-auto-error" ? certify(policy, sample, map, goal, floor) : undefined;
  const threshold =
    certified?.choice ??
    chooseThreshold(calibrated, goal as Exclude<ThresholdGoal, { kind: "max-auto-error" }>, {
      automatable: calibrated.map((d) => topAutomatable(policy, d.probabilities)),
    });
  // Conformal: fit on the first half, check on the other half.
  const half = rows.length >> 1;
  const rule = fitConformal(calibrated.slice(0, half), options.conformalCoverage ?? 0.9);
  const held = evaluateSets(calibrated.slice(half), rule);
  const current = rows.map((r) => ({
    probabilities: calibratedProbabilities(r.logits, policy),
    label: r.label,
  }));
  const raw = rows.map((r) => ({ probabilities: softmax(r.logits), label: r.label }));
  const baseline = baselineOf(policy, calibrated, threshold.coverage);
  const firstProposed = proposeVersion(policy, {
    map,
    threshold: threshold.threshold,
    conformal: rule,
    baseline,
    ...certifiedPart(certified?.certificate, sample, options),
  });
  // A two-model cascade's thresholds are certified together, over both models' automatic actions.
  const final = withCascade(policy, firstProposed, threshold, sample, goal, {
    at: options.now,
    source: options.labelSource,
    floor,
  });
  const proposedPolicy = final.policy;
  return {
    policy: { id: policy.id, version: policy.version },
    options: policy.options.map((o) => o.id),
    labels: rows.length,
    raw: metricSet(raw, bins, binning),
    current: metricSet(current, bins, binning),
    calibrated: metricSet(calibrated, bins, binning),
    temperature: proposedPolicy.temperature,
    comparison,
    reliability: {
      current: reliabilityBins(current, bins, binning),
      calibrated: reliabilityBins(calibrated, bins, binning),
    },
    riskCoverage: riskCoverage(calibrated).points,
    thresholdTable: thresholdTable(policy, calibrated, rows),
    threshold: withCertificateNote(policy, proposedPolicy, final.threshold),
    ...(certified ? { certificate: certified.certificate } : {}),
    ...(final.cascade ? { cascade: final.cascade } : {}),
    conformal: {
      minProbability: rule.minProbability,
      targetCoverage: rule.targetCoverage,
      heldOutCoverage: held.coverage,
      meanSetSize: held.meanSize,
    },
    confusion: confusionMatrix(calibrated, policy.options.length),
    baseline,
    proposedPolicy,
  };
}
