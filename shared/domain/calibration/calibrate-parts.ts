/**
 * The parts of a calibration summary that are computed, not chosen: the metrics of a set of
 * distributions, the share automated at round thresholds (counting only what the policy would act
 * on), the certification with its notes, and the drift baseline of labelled rows.
 */
import type { Policy } from "../policy/policy.ts";
import { argmax } from "../probability.ts";
import { wouldAutomate } from "../routing.ts";
import {
  type CertificatePoint,
  type CertificateResult,
  certificateCurve,
  certificateSentence,
  certifyThreshold,
  type RegisteredResult,
} from "./certificate/certificate.ts";
import { certifiedItems } from "./certificate/certified-items.ts";

import type { CalibrationMap } from "./map.ts";
import {
  accuracy,
  type Binning,
  brierScore,
  expectedCalibrationError,
  type LabelledDistribution,
  negativeLogLikelihood,
  riskCoverage,
} from "./metrics.ts";
import { provenanceOf } from "./provenance.ts";
import type { LabelledLogits } from "./temperature.ts";
import type { ThresholdChoice, ThresholdGoal } from "./threshold.ts";
import { bootstrapInterval } from "./uncertainty.ts";

/** Metrics of one set of distributions. */
export interface MetricSet {
  readonly accuracy: number;
  readonly ece: number;
  readonly eceInterval: [number, number];
  readonly brier: number;
  readonly nll: number;
  readonly aurc: number;
}

/** The metrics of `rows`. */
export function metricSet(rows: readonly LabelledDistribution[], bins: number, binning: Binning): MetricSet {
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

/** One row of the threshold table. */
export interface ThresholdRow {
  readonly threshold: number;
  /** Labelled items the policy would act on at this threshold (its top option automatable). */
  readonly automated: number;
  /** Their estimated share of all decisions (each label weighted by what it stands for). */
  readonly coverage: number;
  /** Their weighted accuracy. */
  readonly automatedAccuracy: number;
}

/**
 * Share automated and its accuracy at round thresholds, counting only items whose top option the
 * policy may automate (an option people always review, or out of scope, is never automated,
 * however confident): routing's `wouldAutomate`, the same definition as the certificate's.
 */
export function thresholdTable(
  policy: Policy,
  calibrated: readonly LabelledDistribution[],
  rows: readonly LabelledLogits[],
): ThresholdRow[] {
  const weight = (i: number) => 1 / (rows[i]?.inclusionProbability ?? 1);
  const total = calibrated.reduce((s, _, i) => s + weight(i), 0);
  return [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99].map((t) => {
    const automated = calibrated.flatMap((r, i) => (wouldAutomate(policy, r.probabilities, t) ? [i] : []));
    const w = automated.reduce((s, i) => s + weight(i), 0);
    const right = automated.reduce(
      (s, i) => s + (argmax(calibrated[i]!.probabilities) === calibrated[i]!.label ? weight(i) : 0),
      0,
    );
    return {
      threshold: t,
      automated: automated.length,
      coverage: total > 0 ? w / total : 0,
      automatedAccuracy: w > 0 ? right / w : Number.NaN,
    };
  });
}

/** The certification with its curve, as the summary carries it (a registered plan's has no curve points). */
export type Certification = (CertificateResult | RegisteredResult) & { readonly curve: CertificatePoint[] };

/** The certification, as a threshold choice and the certificate with its curve. */
export function certify(
  policy: Policy,
  rows: readonly LabelledLogits[],
  map: CalibrationMap,
  goal: Extract<ThresholdGoal, { kind: "max-auto-error" }>,
  floor: number,
): { choice: ThresholdChoice; certificate: Certification } {
  const items = certifiedItems(policy, rows, map);
  const result = certifyThreshold(items, goal, floor);
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
export function baselineOf(
  policy: Policy,
  calibrated: readonly LabelledDistribution[],
  coverage: number,
): { meanConfidence: number; escalationRate: number; optionMix: number[] } {
  const n = calibrated.length;
  return {
    meanConfidence: calibrated.reduce((s, r) => s + top(r), 0) / n,
    escalationRate: 1 - coverage,
    optionMix: policy.options.map(
      (_, k) => calibrated.filter((r) => argmax(r.probabilities) === k).length / n,
    ),
  };
}
