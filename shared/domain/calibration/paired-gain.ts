/**
 * The paired test behind "never worse" (`candidates.ts`): a candidate's out-of-fold NLL gain over a
 * reference, label by label on the same items, with the standard error of that mean gain. Five
 * per-fold gains gave a spread too noisy to judge by (twice it lost the power to find real
 * miscalibration); n paired per-label differences give a standard error that shrinks as 1/√n.
 * Near-duplicates (one group) count once: the standard error is taken over group sums. Pure.
 */
import type { LabelledDistribution } from "./metrics.ts";

/** Share of already calibrated label sets that may get a proposal, over all candidates tried. */
export const FALSE_PROPOSAL_RATE = 0.01;

/** One label's NLL (probabilities floored as `negativeLogLikelihood` does). */
const nllOf = (d: LabelledDistribution) => -Math.log(Math.max(d.probabilities[d.label] ?? 0, 1e-12));

/**
 * `candidate`'s mean NLL gain over `reference` (positive: better) on the same labels, and the
 * standard error of that mean, over groups (`groups[i]`: the group of label i).
 */
export function pairedGain(
  reference: readonly LabelledDistribution[],
  candidate: readonly LabelledDistribution[],
  groups: readonly string[],
): { gain: number; standardError: number } {
  const n = reference.length;
  const sums = new Map<string, { sum: number; count: number }>();
  let total = 0;
  reference.forEach((r, i) => {
    const d = nllOf(r) - nllOf(candidate[i]!);
    total += d;
    const g = sums.get(groups[i]!) ?? { sum: 0, count: 0 };
    sums.set(groups[i]!, { sum: g.sum + d, count: g.count + 1 });
  });
  const gain = total / n;
  const k = sums.size;
  if (k < 2) return { gain, standardError: Number.POSITIVE_INFINITY };
  let squares = 0;
  for (const g of sums.values()) squares += (g.sum - g.count * gain) ** 2;
  return { gain, standardError: Math.sqrt((squares * k) / (k - 1)) / n };
}

/**
 * How many standard errors a gain must exceed: the one-sided normal critical value at
 * `FALSE_PROPOSAL_RATE / tried` (Bonferroni over the `tried` candidates).
 */
export function criticalRatio(tried: number): number {
  return normalQuantile(1 - FALSE_PROPOSAL_RATE / Math.max(1, tried));
}

/** Standard normal upper tail (Abramowitz and Stegun 7.1.26, error below 1.5e-7). */
function upperTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erfc = poly * Math.exp(-x * x);
  return z >= 0 ? erfc / 2 : 1 - erfc / 2;
}

/** The standard normal quantile of `p` in (0, 1), by bisection on the upper tail. */
function normalQuantile(p: number): number {
  let lo = -10;
  let hi = 10;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (1 - upperTail(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
