/**
 * Probability arithmetic shared by the scorer, the pipeline and calibration. Pure functions only.
 */

/** log(Σ exp(x)) without overflow; `-Infinity` for an empty list. */
export function logSumExp(values: readonly number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) if (v > max) max = v;
  if (max === Number.NEGATIVE_INFINITY) return max;
  let sum = 0;
  for (const v of values) sum += Math.exp(v - max);
  return max + Math.log(sum);
}

/**
 * Softmax of `logits / temperature`. Dividing by a temperature never changes which entry is
 * largest, so calibration never changes the chosen option.
 */
export function softmax(logits: readonly number[], temperature = 1): number[] {
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new RangeError(`temperature must be a positive finite number, got ${temperature}`);
  }
  const scaled = logits.map((l) => l / temperature);
  const norm = logSumExp(scaled);
  return scaled.map((l) => Math.exp(l - norm));
}

/** Index of the largest value (the first one on ties). */
export function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * The published confidence statistic: `clamp((n · max p − 1) / (n − 1), 0, 1)`.
 * 0 for a uniform distribution, 1 when one option holds all the mass.
 */
export function confidence(probabilities: readonly number[]): number {
  const n = probabilities.length;
  if (n < 2) return 1;
  const top = Math.max(...probabilities);
  return Math.min(1, Math.max(0, (n * top - 1) / (n - 1)));
}

/** Expected level `Σ i · p_i` of a distribution over ordered levels 0..n-1. */
export function expectedLevel(probabilities: readonly number[]): number {
  return probabilities.reduce((sum, p, i) => sum + i * p, 0);
}
