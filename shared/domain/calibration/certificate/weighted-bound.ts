/**
 * An upper confidence bound on a rate from labels that stand for different numbers of decisions
 * (each labelled unit weighted by the inverse of its chance of being labelled). With equal
 * weights the exact binomial (Clopper–Pearson) bound applies as it is. With unequal weights the
 * rate is a weighted sum of error indicators, and its bound is the gamma bound of Fay and Feuer
 * ("Confidence intervals for directly standardized rates: a method based on the gamma
 * distribution", Statistics in Medicine 16, 1997): the upper limit is the quantile of a gamma
 * distribution whose mean and variance are those of the weighted count, each raised by the
 * largest single weight, so that it is never narrower than the exact Poisson bound of the
 * heaviest unit. It reduces to the exact Poisson bound when the weights are equal, reads a 0/1
 * error as a Poisson count (which only widens it), and was conservative in the authors'
 * simulations and in ours (`test/unit/certificate-weighted.test.ts`).
 */

import { gammaQuantile } from "../../statistics/gamma.ts";
import { clopperPearsonUpper } from "./binomial.ts";

/** One labelled unit: how many decisions it stands for, and whether its label says the choice was wrong. */
export interface WeightedUnit {
  readonly weight: number;
  readonly wrong: boolean;
}

/** What a bound rests on: enough to recompute it where it is used. */
export interface BoundEvidence {
  readonly method: "clopper-pearson" | "fay-feuer";
  readonly units: number;
  readonly errors: number;
  /** Fay–Feuer, with the weights scaled to sum to 1: Σ w over the wrong units. */
  readonly weightedErrors?: number | undefined;
  /** Σ w² over the wrong units. */
  readonly squaredErrorWeights?: number | undefined;
  /** The largest weight of any unit. */
  readonly maxWeight?: number | undefined;
}

/** `x` rounded up to 6 significant digits. */
function up6(x: number): number {
  if (x <= 0) return 0;
  const scale = 10 ** (5 - Math.floor(Math.log10(x)));
  return Math.min(1, Math.ceil(x * scale) / scale);
}

/**
 * Fay–Feuer evidence from raw sums, as a certificate writes it: each figure rounded up to 6
 * significant digits (the bound only grows with each), so the bound recomputed from what is
 * written is the one that was tested.
 */
export function fayFeuerEvidence(
  counts: { readonly units: number; readonly errors: number },
  sums: {
    readonly total: number;
    readonly wrong: number;
    readonly wrongSquares: number;
    readonly max: number;
  },
): BoundEvidence {
  return {
    method: "fay-feuer",
    ...counts,
    weightedErrors: up6(sums.wrong / sums.total),
    squaredErrorWeights: up6(sums.wrongSquares / sums.total ** 2),
    maxWeight: up6(sums.max / sums.total),
  };
}

/** Weights this close (relatively) count as equal: the exact binomial bound then applies. */
const EQUAL = 1e-9;

/** The evidence of `units` (weights need not be scaled). */
export function evidenceOf(units: readonly WeightedUnit[]): BoundEvidence {
  const errors = units.filter((u) => u.wrong).length;
  const weights = units.map((u) => u.weight);
  const max = Math.max(...weights);
  const min = Math.min(...weights);
  if (units.length === 0 || max - min <= EQUAL * max)
    return { method: "clopper-pearson", units: units.length, errors };
  const total = weights.reduce((s, w) => s + w, 0);
  let wrong = 0;
  let wrongSquares = 0;
  for (const u of units)
    if (u.wrong) {
      wrong += u.weight;
      wrongSquares += u.weight ** 2;
    }
  return fayFeuerEvidence({ units: units.length, errors }, { total, wrong, wrongSquares, max });
}

/** The one-sided upper bound at `confidence` that `evidence` gives. */
export function boundOf(evidence: BoundEvidence, confidence: number): number {
  const w = evidence.maxWeight ?? 1;
  // With no error both have closed forms (the certificate asks at every threshold of its grid).
  if (evidence.errors === 0 && evidence.units > 0)
    return evidence.method === "clopper-pearson"
      ? 1 - (1 - confidence) ** (1 / evidence.units)
      : Math.min(1, -Math.log(1 - confidence) * w);
  if (evidence.method === "clopper-pearson")
    return clopperPearsonUpper(evidence.errors, evidence.units, confidence);
  const y = evidence.weightedErrors ?? 0;
  const v = evidence.squaredErrorWeights ?? 0;
  const shape = (y + w) ** 2 / (v + w * w);
  const scale = (v + w * w) / (y + w);
  return Math.min(1, gammaQuantile(confidence, shape, scale));
}
