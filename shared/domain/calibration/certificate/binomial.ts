/**
 * Exact binomial tail and the Clopper–Pearson upper confidence bound, for small error counts out
 * of any number of trials (summed in log space, so n in the millions does not underflow).
 */
import { logSumExp } from "../../probability.ts";

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

/** Φ(x), the standard normal distribution function (Abramowitz and Stegun 7.1.26, within 1e-7). */
function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** The normal quantile z with Φ(z) = p, by bisection. */
function normalQuantile(p: number): number {
  let lo = -10;
  let hi = 10;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Beyond this many expected errors the bound is computed from the normal approximation. */
const EXACT_ERRORS = 100;

/** Segment starts in a row that must pass before the search stops (the bound there falls with k). */
const SETTLED = 25;

/**
 * Fewest trials n from which every larger n gives an upper bound below `target` when `rate`
 * errors are observed (rounded: round(rate · n)); undefined when the rate is not below the target
 * (no number of trials is enough). Passing is not monotone in n: each time the rounded error
 * count steps up, the bound jumps up. Within a stretch of equal rounded errors the bound only
 * falls as n grows, so only each stretch's first n can fail after an earlier pass: the search
 * walks the stretches in order, and stops once 25 stretch starts in a row pass (the bound at a
 * stretch start falls with the error count). Exact while the expected errors stay under 100;
 * beyond, the normal approximation (then an "about" figure, as it is used).
 */
export function trialsNeeded(rate: number, target: number, confidence: number): number | undefined {
  if (!(rate < target)) return undefined;
  // The exact bound is under the target exactly when the target's tail is under 1 − confidence.
  const passes = (n: number) => binomialCdf(Math.round(rate * n), n, target) < 1 - confidence;
  // The first n (≥ `from`, ≤ `to`) that passes, the bound falling over the range; undefined if none.
  const firstPass = (from: number, to: number): number | undefined => {
    let hi = from;
    while (!passes(hi)) {
      if (hi >= to) return undefined;
      hi = Math.min(to, hi * 2);
    }
    let lo = from - 1;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (passes(mid)) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  // The first n whose rounded error count is k.
  const startOf = (k: number) => {
    if (k === 0) return 1;
    let n = Math.max(1, Math.ceil((k - 0.5) / rate));
    while (Math.round(rate * n) < k) n++;
    while (n > 1 && Math.round(rate * (n - 1)) >= k) n--;
    return n;
  };
  let found: number | undefined;
  let settled = 0;
  for (let k = 0; settled < SETTLED; k++) {
    if (k > EXACT_ERRORS) {
      if (found !== undefined) return found;
      const z = normalQuantile(confidence);
      return Math.ceil((z * z * rate * (1 - rate)) / (target - rate) ** 2);
    }
    const from = startOf(k);
    const to = rate === 0 ? Number.POSITIVE_INFINITY : startOf(k + 1) - 1;
    if (to < from) continue;
    if (passes(from)) {
      found ??= from;
      settled++;
    } else {
      found = firstPass(from, to);
      settled = 0;
    }
    if (rate === 0) return found;
  }
  return found;
}
