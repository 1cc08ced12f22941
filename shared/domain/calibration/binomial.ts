/**
 * Exact binomial tail and the Clopper–Pearson upper confidence bound, for small error counts out
 * of any number of trials (summed in log space, so n in the millions does not underflow).
 */
import { logSumExp } from "../probability.ts";

/** P(X ≤ k) for X ~ Binomial(n, p). */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  const ratio = Math.log(p) - Math.log1p(-p);
  let term = n * Math.log1p(-p);
  const terms = [term];
  for (let i = 1; i <= k; i++) {
    term += Math.log((n - i + 1) / i) + ratio;
    terms.push(term);
  }
  return Math.min(1, Math.exp(logSumExp(terms)));
}

/**
 * The exact (Clopper–Pearson) one-sided upper bound on a rate from `errors` out of `n`: the p at
 * which seeing `errors` or fewer has probability 1 − `confidence`.
 */
export function clopperPearsonUpper(errors: number, n: number, confidence: number): number {
  if (n === 0 || errors >= n) return 1;
  const delta = 1 - confidence;
  let lo = errors / n;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (binomialCdf(errors, n, mid) > delta) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * Fewest trials for which `rate` observed errors (rounded) would give an upper bound below
 * `target`; undefined when the rate is not below the target (no number of trials is enough).
 */
export function trialsNeeded(rate: number, target: number, confidence: number): number | undefined {
  if (!(rate < target)) return undefined;
  const passes = (n: number) => clopperPearsonUpper(Math.round(rate * n), n, confidence) < target;
  let hi = 1;
  while (!passes(hi)) {
    hi *= 2;
    if (hi > 2 ** 30) return undefined;
  }
  let lo = Math.floor(hi / 2);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (passes(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}
