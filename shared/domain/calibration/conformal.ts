/**
 * Split conformal prediction sets: from held-out labelled distributions, a cut-off such that the
 * set of options whose probability clears it holds the true option with the target coverage
 * (at least 1 − α on exchangeable data).
 */
import type { LabelledDistribution } from "./metrics.ts";

/** The fitted set rule. */
export interface ConformalRule {
  /** Options with probability at or above this are in the set. */
  readonly minProbability: number;
  readonly targetCoverage: number;
  readonly calibrationSize: number;
}

/** Fits the rule on calibration rows (nonconformity: 1 − p(label)). */
export function fitConformal(rows: readonly LabelledDistribution[], targetCoverage: number): ConformalRule {
  const scores = rows.map((r) => 1 - (r.probabilities[r.label] ?? 0)).sort((a, b) => a - b);
  const n = scores.length;
  const rank = Math.min(n, Math.ceil((n + 1) * targetCoverage));
  const qhat = n === 0 ? 1 : scores[rank - 1]!;
  return { minProbability: 1 - qhat, targetCoverage, calibrationSize: n };
}

/** The prediction set (option indices) for a distribution. */
export function predictionSet(
  probabilities: readonly number[],
  rule: Pick<ConformalRule, "minProbability">,
): number[] {
  const set = probabilities.flatMap((p, i) => (p >= rule.minProbability ? [i] : []));
  return set.length > 0 ? set : [probabilities.indexOf(Math.max(...probabilities))];
}

/** Share of rows whose set holds the label, and the mean set size. */
export function evaluateSets(
  rows: readonly LabelledDistribution[],
  rule: ConformalRule,
): { coverage: number; meanSize: number } {
  let covered = 0;
  let size = 0;
  for (const r of rows) {
    const set = predictionSet(r.probabilities, rule);
    if (set.includes(r.label)) covered++;
    size += set.length;
  }
  return {
    coverage: rows.length ? covered / rows.length : Number.NaN,
    meanSize: rows.length ? size / rows.length : Number.NaN,
  };
}
