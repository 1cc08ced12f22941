/**
 * Uncertainty of small samples: bootstrap percentile intervals and the Wilson score interval for
 * a proportion. Seeded, so reports are reproducible.
 */
import { SeededRandom } from "../random.ts";

/** A 95% bootstrap percentile interval of `statistic` over resamples of `rows`. */
export function bootstrapInterval<T>(
  rows: readonly T[],
  statistic: (sample: T[]) => number,
  { resamples = 500, seed = 1 }: { resamples?: number; seed?: number } = {},
): [number, number] {
  if (rows.length === 0) return [Number.NaN, Number.NaN];
  const random = new SeededRandom(seed);
  const values: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample = Array.from(
      { length: rows.length },
      () => rows[Math.floor(random.nextFloat() * rows.length)]!,
    );
    values.push(statistic(sample));
  }
  values.sort((a, b) => a - b);
  return [values[Math.floor(0.025 * (resamples - 1))]!, values[Math.ceil(0.975 * (resamples - 1))]!];
}

/** The 95% Wilson score interval of `successes` out of `n`. */
export function wilsonInterval(successes: number, n: number, z = 1.959964): [number, number] {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
