/**
 * The gamma distribution's lower regularized incomplete function P(a, x) and its quantile, for the
 * weighted (Fay–Feuer) upper bound on a rate (`../calibration/certificate/weighted-bound.ts`). Series below
 * a + 1, continued fraction above (the usual split, after Numerical Recipes §6.2).
 */
import { logGamma } from "./beta.ts";

/** P(a, x) = γ(a, x) / Γ(a), for a > 0 and x ≥ 0. */
export function regularizedGammaP(a: number, x: number): number {
  if (!(a > 0)) throw new RangeError(`gamma shape must be positive, got ${a}`);
  if (x <= 0) return 0;
  const front = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 1000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-16) break;
    }
    return Math.min(1, front * sum);
  }
  // Continued fraction for Q(a, x) (modified Lentz).
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-16) break;
  }
  return Math.max(0, 1 - front * h);
}

/** The p-quantile of Gamma(shape, scale) (bisection on P: monotone, relative precision about 1e-12). */
export function gammaQuantile(p: number, shape: number, scale: number): number {
  if (p <= 0) return 0;
  let low = 0;
  let high = Math.max(1, shape) * 2;
  while (regularizedGammaP(shape, high) < p) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-12 * high; i++) {
    const mid = (low + high) / 2;
    if (regularizedGammaP(shape, mid) < p) low = mid;
    else high = mid;
  }
  return ((low + high) / 2) * scale;
}
