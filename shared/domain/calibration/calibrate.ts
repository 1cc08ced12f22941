/**
 * Calibrating one policy from labelled decisions: every candidate calibration compared out of fold
 * with the policy as it stands (`candidates.ts`), the auto threshold (from the risk–coverage curve,
 * or certified: `certificate.ts`), conformal prediction sets, and the proposed next policy version
 * (`proposal.ts`). Pure: callers bring the rows and write the outputs.
 */
import type { LabelSource } from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import { argmax, softmax } from "../probability.ts";
import { type CandidateComparison, compareCandidates } from "./candidates.ts";
import {
  type CertificatePoint,
  type CertificateResult,
  certificateCurve,
  certificateSentence,
  certifyThreshold,
} from "./certificate.ts";
import { certifiedItems, topAutomatable } from "./certified-items.ts";
import { evaluateSets, fitConformal } from "./conformal.ts";
import { type CalibrationMap, calibratedProbabilities, mapOf } from "./map.ts";
import {
  accuracy,
  type Binning,
  brierScore,
  type CoveragePoint,
  confusionMatrix,
  expectedCalibrationError,
  type LabelledDistribution,
  negativeLogLikelihood,
  type ReliabilityBin,
  reliabilityBins,
  riskCoverage,
} from "./metrics.ts";
import { proposeVersion, roundMap } from "./proposal.ts";
import { provenanceOf } from "./provenance.ts";
import { MIN_FIT_LABELS } from "./ranges.ts";
import type { LabelledLogits } from "./temperature.ts";
import { chooseThreshold, type ThresholdChoice, type ThresholdGoal } from "./threshold.ts";
import { bootstrapInterval } from "./uncertainty.ts";

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

/** Metrics of one set of distributions. */
export interface MetricSet {
  readonly accuracy: number;
  readonly ece: number;
  readonly eceInterval: [number, number];
  readonly brier: number;
  readonly nll: number;
  readonly aurc: number;
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
  readonly thresholdTable: { threshold: number; coverage: number; automatedAccuracy: number }[];
  readonly threshold: ThresholdChoice;
  /** With `--max-auto-error`: the certification and its curve (points with their exact bounds). */
  readonly certificate?: CertificateResult & { readonly curve: CertificatePoint[] };
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
}

function metricSet(rows: readonly LabelledDistribution[], bins: number, binning: Binning): MetricSet {
  return {
    accuracy: accuracy(rows),
    ece: expectedCalibrationError(rows, bins, binning),
    eceInterval: bootstrapInterval(rows, (sample) => expectedCalibrationError(sample, bins, binning)),
    brier: brierScore(rows),
    nll: negativeLogLikelihood(rows),
    aurc: riskCoverage(rows).aurc,
  };
}

const top = (r: LabelledDistribution) => Math.max(...r.probabilities);

function thresholdTable(calibrated: readonly LabelledDistribution[]): CalibrationSummary["thresholdTable"] {
  return [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99].map((t) => {
    const automated = calibrated.filter((r) => top(r) >= t);
    return {
      threshold: t,
      coverage: automated.length / calibrated.length,
      automatedAccuracy: accuracy(automated),
    };
  });
}

/** The certification, as a threshold choice and the certificate with its curve. */
function certify(
  policy: Policy,
  rows: readonly LabelledLogits[],
  map: CalibrationMap,
  goal: Extract<ThresholdGoal, { kind: "max-auto-error" }>,
): { choice: ThresholdChoice; certificate: NonNullable<CalibrationSummary["certificate"]> } {
  const items = certifiedItems(policy, rows, map);
  const result = certifyThreshold(items, goal);
  const notes = [certificateSentence(result)];
  const provenance = provenanceOf(rows);
  if (provenance.models.length > 1 || provenance.promptVersions.length > 1)
    notes.push(
      `the labels come from ${provenance.models.length} model files and ${provenance.promptVersions.length} prompt layouts: the certificate names none, so it reads as stale wherever it is checked`,
    );
  else if (provenance.modelSha256 === null)
    notes.push(
      "the labelled rows do not name the model that scored them: the certificate reads as stale wherever it is checked",
    );
  const choice: ThresholdChoice = {
    threshold: result.threshold ?? 1,
    coverage: result.coverage,
    automatedAccuracy: result.automated ? 1 - result.errors / result.automated : Number.NaN,
    automatedAccuracyInterval: result.bound === null ? [0, 1] : [1 - result.bound, 1],
    labels: rows.length,
    notes,
  };
  return { choice, certificate: { ...result, curve: certificateCurve(items, goal.confidence) } };
}

/** What calibrated decisions looked like (the drift baseline). */
function baselineOf(
  policy: Policy,
  calibrated: readonly LabelledDistribution[],
  coverage: number,
): CalibrationSummary["baseline"] {
  const n = calibrated.length;
  return {
    meanConfidence: calibrated.reduce((s, r) => s + top(r), 0) / n,
    escalationRate: 1 - coverage,
    optionMix: policy.options.map(
      (_, k) => calibrated.filter((r) => argmax(r.probabilities) === k).length / n,
    ),
  };
}

/** A policy that requires a certificate automates nothing under a version that carries none: say so. */
function withCertificateNote(policy: Policy, proposed: Policy, threshold: ThresholdChoice): ThresholdChoice {
  if (!policy.requireCertificate || proposed.certificate) return threshold;
  const note = `${policy.id} requires a certificate and this version carries none, so it would automate nothing: certify it with --max-auto-error`;
  return { ...threshold, notes: [...threshold.notes, note] };
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
  const certified = goal.kind === "max-auto-error" ? certify(policy, rows, map, goal) : undefined;
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
  const proposedPolicy = proposeVersion(policy, {
    map,
    threshold: threshold.threshold,
    conformal: rule,
    baseline,
    ...(certified
      ? {
          certified: {
            result: certified.certificate,
            rows,
            ...provenanceOf(rows),
            at: options.now,
            ...(options.labelSource ? { source: options.labelSource } : {}),
          },
        }
      : {}),
  });
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
    thresholdTable: thresholdTable(calibrated),
    threshold: withCertificateNote(policy, proposedPolicy, threshold),
    ...(certified ? { certificate: certified.certificate } : {}),
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
