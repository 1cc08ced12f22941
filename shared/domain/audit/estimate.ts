/**
 * The rate of wrong automatic actions, estimated from audit samples without bias.
 *
 * Audits draw otherwise automatic decisions at a rate that depends on their confidence band
 * (stratified sampling), so a plain mean over audit labels over-weights the bands audited most.
 * Each stratum (a policy version and band) is weighted by the number of automatic decisions it
 * stands for, estimated by Horvitz–Thompson as Σ 1/π over its audit samples; within a stratum
 * the error rate is the share of its labelled samples whose label differs from the model's
 * choice (samples still waiting for a label are assumed missing at random within their stratum).
 * The result is the Hájek (ratio) estimator with a per-stratum non-response adjustment.
 *
 * The interval follows Korn & Graubard (1998): the Clopper–Pearson interval at an effective
 * sample size n* = p(1 − p) / Var(p), taken no larger than Kish's design-effect size
 * (Σw)² / Σw² nor than the number of labels, so that a stratified sample with few errors (or
 * none) still gets an honest, exact-style bound. See docs/architecture.md, "Live error rate".
 */
import { clopperPearson } from "../statistics/beta.ts";

/** One audit sample: an otherwise automatic decision drawn for a person's label. */
export interface AuditSample {
  /** The stratum it was drawn in: its policy version and audit band. */
  readonly stratum: string;
  /** The chance decisions of its stratum were drawn (0 < π ≤ 1). */
  readonly inclusionProbability: number;
  /** The option the model chose: the action it would have taken. */
  readonly chosen: string;
  /** The reviewer's label; absent while the sample waits for review. */
  readonly label?: string;
  /** Unlabelled, but one reviewer has labelled it: it waits for a second, different one. */
  readonly awaitingSecondReviewer?: boolean;
}

/** The estimate and what it rests on. */
export interface AutoErrorEstimate {
  /** Estimated rate of wrong automatic actions; NaN without labels. */
  readonly rate: number;
  /** Two-sided interval at `confidence`; [0, 1] without labels. */
  readonly interval: readonly [number, number];
  readonly confidence: number;
  /** Audit samples drawn, labelled or not. */
  readonly samples: number;
  /** Of those, labelled. */
  readonly labelled: number;
  /** Of the unlabelled ones, those with a first label that wait for a second reviewer (absent: none). */
  readonly awaitingSecondReviewer?: number;
  /** Labelled samples whose label differs from the model's choice. */
  readonly wrong: number;
  /** Automatic decisions the samples stand for (Σ 1/π). */
  readonly automated: number;
  /** Share of those in strata with at least one label: the part the estimate speaks for. */
  readonly covered: number;
  /** The effective sample size the interval was computed at. */
  readonly effectiveLabels: number;
}

interface Stratum {
  weight: number;
  labelled: number;
  wrong: number;
}

/** Estimates the rate of wrong automatic actions from `samples` (see the module comment). */
export function estimateAutoError(samples: readonly AuditSample[], confidence = 0.95): AutoErrorEstimate {
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  const strata = new Map<string, Stratum>();
  for (const sample of samples) {
    const pi = sample.inclusionProbability;
    if (!(pi > 0 && pi <= 1))
      throw new RangeError(`inclusion probability must be in (0, 1], got ${pi} (stratum ${sample.stratum})`);
    const stratum = strata.get(sample.stratum) ?? { weight: 0, labelled: 0, wrong: 0 };
    stratum.weight += 1 / pi;
    if (sample.label !== undefined) {
      stratum.labelled++;
      if (sample.label !== sample.chosen) stratum.wrong++;
    }
    strata.set(sample.stratum, stratum);
  }
  const all = [...strata.values()];
  const automated = all.reduce((sum, s) => sum + s.weight, 0);
  const seen = all.filter((s) => s.labelled > 0);
  const seenWeight = seen.reduce((sum, s) => sum + s.weight, 0);
  const labelled = seen.reduce((sum, s) => sum + s.labelled, 0);
  const wrong = seen.reduce((sum, s) => sum + s.wrong, 0);
  const second = samples.filter(
    (sample) => sample.label === undefined && sample.awaitingSecondReviewer,
  ).length;
  const base = {
    confidence,
    samples: samples.length,
    labelled,
    ...(second > 0 ? { awaitingSecondReviewer: second } : {}),
    wrong,
    automated,
  };
  if (labelled === 0) return { ...base, rate: Number.NaN, interval: [0, 1], covered: 0, effectiveLabels: 0 };
  let rate = 0;
  let shrunkRate = 0;
  let variance = 0;
  for (const s of seen) {
    const share = s.weight / seenWeight;
    rate += (share * s.wrong) / s.labelled;
    // Each stratum's variance at the shrunk rate (e + 1/2) / (n + 1): a stratum with few labels
    // and no error would otherwise claim zero variance, and the interval would be narrowest
    // exactly where errors can hide.
    const shrunk = (s.wrong + 0.5) / (s.labelled + 1);
    shrunkRate += share * shrunk;
    variance += (share * share * shrunk * (1 - shrunk)) / s.labelled;
  }
  // The effective sample size n / design effect, both sides at the shrunk rates.
  const effectiveLabels = Math.min(labelled, (shrunkRate * (1 - shrunkRate)) / variance);
  return {
    ...base,
    rate,
    interval: clopperPearson(rate * effectiveLabels, effectiveLabels, confidence),
    covered: seenWeight / automated,
    effectiveLabels,
  };
}
