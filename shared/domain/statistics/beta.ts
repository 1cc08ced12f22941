/**
 * Exact binomial bounds: the regularized incomplete beta function, its inverse, and the
 * Clopper–Pearson interval built on them. Counts may be fractional (an effective sample size, as
 * the audit estimator uses), so everything is written for real arguments.
 */

// Lanczos approximation (g = 7, n = 9): about 15 significant digits for x > 0.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i++) sum += LANCZOS[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 300; m++) {
    for (const step of [
      (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)),
      (-(a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1)),
    ]) {
      d = 1 + step * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + step / c;
      if (Math.abs(c) < tiny) c = tiny;
      h *= c * d;
    }
    if (Math.abs(c * d - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]. */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (!(a > 0 && b > 0)) throw new RangeError(`beta parameters must be positive, got ${a} and ${b}`);
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast only below the mean; use the symmetry above it.
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** The p-quantile of the Beta(a, b) distribution (bisection: monotone, exact to about 1e-12). */
export function betaQuantile(p: number, a: number, b: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let low = 0;
  let high = 1;
  for (let i = 0; i < 100 && high - low > 1e-13; i++) {
    const mid = (low + high) / 2;
    if (regularizedBeta(mid, a, b) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/**
 * The two-sided Clopper–Pearson interval of `x` events in `n` trials at `confidence` (each tail
 * (1 − confidence) / 2). `x` and `n` may be fractional (an effective count).
 */
export function clopperPearson(x: number, n: number, confidence = 0.95): [number, number] {
  if (!(n > 0)) return [0, 1];
  const tail = (1 - confidence) / 2;
  const lower = x <= 0 ? 0 : betaQuantile(tail, x, n - x + 1);
  const upper = x >= n ? 1 : betaQuantile(1 - tail, x + 1, n - x);
  return [lower, upper];
}

/**
 * The one-sided exact upper bound on a rate after `x` events in `n` trials: the rate below which
 * the truth lies with probability `confidence` (Clopper–Pearson, one tail).
 */
export function binomialUpperBound(x: number, n: number, confidence = 0.95): number {
  if (!(n > 0)) return 1;
  return x >= n ? 1 : betaQuantile(confidence, x + 1, n - x);
}
