/**
 * Calibrating one policy from labelled decisions: metrics before and after temperature scaling
 * (out of fold, with bootstrap intervals), the auto threshold, conformal prediction sets, and the
 * proposed next policy version. Pure: callers bring the rows and write the outputs.
 */
import type { Policy } from "../policy/policy.ts";
import { argmax, softmax } from "../probability.ts";
import { evaluateSets, fitConformal } from "./conformal.ts";
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
import { correctForPrior } from "./prior.ts";
import { fitTemperature, type LabelledLogits, outOfFold } from "./temperature.ts";
import { chooseThreshold, type ThresholdChoice, type ThresholdGoal } from "./threshold.ts";
import { bootstrapInterval } from "./uncertainty.ts";
import { fitVectorScaling, outOfFoldVector } from "./vector-scaling.ts";

/** Options of {@link calibratePolicy}. */
export interface CalibrateOptions {
  readonly goal: ThresholdGoal;
  /** @default 10 */
  readonly bins?: number;
  /** @default "equal-width" */
  readonly binning?: Binning;
  /** @default 5 */
  readonly folds?: number;
  /** Target coverage of conformal sets. @default 0.9 */
  readonly conformalCoverage?: number;
  /** A label-free prior (from content-free inputs) to divide out before everything else. */
  readonly prior?: readonly number[];
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
  readonly raw: MetricSet;
  /** Out of fold: each item calibrated with a temperature fitted without it. */
  readonly calibrated: MetricSet;
  /** Fitted on all labels: the one the new policy version gets. */
  readonly temperature: number;
  readonly foldTemperatures: number[];
  readonly reliability: { readonly raw: ReliabilityBin[]; readonly calibrated: ReliabilityBin[] };
  readonly riskCoverage: CoveragePoint[];
  /** Share automated and automated accuracy at round thresholds (calibrated). */
  readonly thresholdTable: { threshold: number; coverage: number; automatedAccuracy: number }[];
  readonly threshold: ThresholdChoice;
  readonly conformal: {
    minProbability: number;
    targetCoverage: number;
    heldOutCoverage: number;
    meanSetSize: number;
  };
  readonly confusion: number[][];
  /** For drift checks: what calibrated decisions looked like. */
  readonly baseline: { meanConfidence: number; escalationRate: number; optionMix: number[] };
  /**
   * Vector scaling (temperature plus one offset per option): its out-of-fold NLL against
   * temperature alone, whether it is proposed (only when lower), and the share of items whose
   * chosen option it changes.
   */
  readonly vectorScaling: {
    readonly temperature: number;
    readonly bias: number[];
    readonly outOfFoldNll: number;
    readonly temperatureOutOfFoldNll: number;
    readonly chosen: boolean;
    readonly changedChoices: number;
  };
  /** With a prior: accuracy and out-of-fold NLL on the labelled sample without and with it. */
  readonly priorCorrection?: {
    readonly prior: number[];
    readonly without: { readonly accuracy: number; readonly nll: number };
    readonly with: { readonly accuracy: number; readonly nll: number };
    /** Whether the proposed version carries it (a new prior only when it lowers the NLL). */
    readonly adopted: boolean;
  };
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

/** Calibrates `policy` from labelled logits (labels are option indices). */
export function calibratePolicy(
  policy: Policy,
  rawRows: readonly LabelledLogits[],
  options: CalibrateOptions,
): CalibrationSummary {
  if (rawRows.length < 10)
    throw new RangeError(`calibration needs at least 10 labelled items, got ${rawRows.length}`);
  // A prior the policy already carries always applies (the pipeline divides it out before
  // routing); a newly estimated one is adopted only when it lowers the out-of-fold NLL.
  const candidate = options.prior ?? policy.prior;
  const corrected = candidate
    ? rawRows.map((r) => ({ ...r, logits: correctForPrior(r.logits, candidate) }))
    : rawRows;
  let priorCorrection: CalibrationSummary["priorCorrection"];
  if (candidate) {
    const without = outOfFold(rawRows, options.folds ?? 5).calibrated;
    const withPrior = outOfFold(corrected, options.folds ?? 5).calibrated;
    const after = { accuracy: accuracy(withPrior), nll: negativeLogLikelihood(withPrior) };
    const before = { accuracy: accuracy(without), nll: negativeLogLikelihood(without) };
    const adopted = options.prior === undefined || after.nll < before.nll;
    priorCorrection = { prior: [...candidate], without: before, with: after, adopted };
  }
  const prior = priorCorrection?.adopted ? candidate : undefined;
  const rows = prior ? corrected : rawRows;
  const bins = options.bins ?? 10;
  const binning = options.binning ?? "equal-width";
  const raw = rows.map((r) => ({ probabilities: softmax(r.logits), label: r.label }));
  const { calibrated, temperatures } = outOfFold(rows, options.folds ?? 5);
  const temperature = fitTemperature(rows);
  const vectorCalibrated = outOfFoldVector(rows, options.folds ?? 5);
  const vector = fitVectorScaling(rows);
  const vectorNll = negativeLogLikelihood(vectorCalibrated);
  const temperatureNll = negativeLogLikelihood(calibrated);
  const useVector = vectorNll < temperatureNll;
  const changedChoices =
    calibrated.filter((r, i) => argmax(r.probabilities) !== argmax(vectorCalibrated[i]!.probabilities))
      .length / rows.length;
  const threshold = chooseThreshold(calibrated, options.goal);

  // Conformal: fit on the first half (by fold parity of the index), check on the other half.
  const half = rows.length >> 1;
  const rule = fitConformal(calibrated.slice(0, half), options.conformalCoverage ?? 0.9);
  const held = evaluateSets(calibrated.slice(half), rule);

  const thresholdTable = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.99].map((t) => {
    const automated = calibrated.filter((r) => Math.max(...r.probabilities) >= t);
    return {
      threshold: t,
      coverage: automated.length / calibrated.length,
      automatedAccuracy: accuracy(automated),
    };
  });
  const optionMix = policy.options.map(
    (_, k) => calibrated.filter((r) => argmax(r.probabilities) === k).length / calibrated.length,
  );
  const nextThreshold = Math.min(1, Number(threshold.threshold.toFixed(4)));
  return {
    policy: { id: policy.id, version: policy.version },
    options: policy.options.map((o) => o.id),
    labels: rows.length,
    raw: metricSet(raw, bins, binning),
    calibrated: metricSet(calibrated, bins, binning),
    temperature,
    foldTemperatures: temperatures,
    reliability: {
      raw: reliabilityBins(raw, bins, binning),
      calibrated: reliabilityBins(calibrated, bins, binning),
    },
    riskCoverage: riskCoverage(calibrated).points,
    thresholdTable,
    threshold,
    conformal: {
      minProbability: rule.minProbability,
      targetCoverage: rule.targetCoverage,
      heldOutCoverage: held.coverage,
      meanSetSize: held.meanSize,
    },
    confusion: confusionMatrix(calibrated, policy.options.length),
    ...(priorCorrection ? { priorCorrection } : {}),
    vectorScaling: {
      temperature: vector.temperature,
      bias: vector.bias,
      outOfFoldNll: vectorNll,
      temperatureOutOfFoldNll: temperatureNll,
      chosen: useVector,
      changedChoices,
    },
    baseline: {
      meanConfidence: calibrated.reduce((s, r) => s + Math.max(...r.probabilities), 0) / calibrated.length,
      escalationRate: 1 - threshold.coverage,
      optionMix,
    },
    proposedPolicy: {
      ...policy,
      version: policy.version + 1,
      temperature: Number((useVector ? vector.temperature : temperature).toFixed(4)),
      ...(useVector ? { optionBias: vector.bias.map((b) => Number(b.toFixed(4))) } : {}),
      ...(prior ? { prior: prior.map((p) => Number(p.toPrecision(4))) } : {}),
      autoThreshold: nextThreshold,
      predictionSet: {
        minProbability: Number(rule.minProbability.toFixed(4)),
        targetCoverage: rule.targetCoverage,
      },
      baseline: {
        meanConfidence: Number(
          (calibrated.reduce((s, r) => s + Math.max(...r.probabilities), 0) / calibrated.length).toFixed(4),
        ),
        escalationRate: Number((1 - threshold.coverage).toFixed(4)),
        optionMix: optionMix.map((m) => Number(m.toFixed(4))),
      },
    },
  };
}
