/**
 * Calibration metrics over labelled predictions: accuracy, top-label expected calibration error
 * (equal-width or equal-mass bins), Brier score, negative log-likelihood, confusion, the
 * reliability diagram, the risk–coverage curve and its area. Pure functions.
 */
import { argmax } from "../probability.ts";

/** One prediction with its true label (an option index). */
export interface LabelledDistribution {
  readonly probabilities: readonly number[];
  readonly label: number;
}

/** How ECE bins are drawn. */
export type Binning = "equal-width" | "equal-mass";

/** One bin of the reliability diagram. */
export interface ReliabilityBin {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
  /** Mean top probability in the bin. */
  readonly confidence: number;
  /** Share of the bin whose top option is the label. */
  readonly accuracy: number;
}

/** Share of predictions whose top option is the label. */
export function accuracy(rows: readonly LabelledDistribution[]): number {
  if (rows.length === 0) return Number.NaN;
  return rows.filter((r) => argmax(r.probabilities) === r.label).length / rows.length;
}

/** The reliability diagram's bins (empty bins included, with count 0). */
export function reliabilityBins(
  rows: readonly LabelledDistribution[],
  bins = 10,
  binning: Binning = "equal-width",
): ReliabilityBin[] {
  const scored = rows.map((r) => {
    const top = argmax(r.probabilities);
    return { confidence: r.probabilities[top]!, correct: top === r.label ? 1 : 0 };
  });
  const groups: { lower: number; upper: number; items: typeof scored }[] = [];
  if (binning === "equal-width") {
    for (let b = 0; b < bins; b++) groups.push({ lower: b / bins, upper: (b + 1) / bins, items: [] });
    for (const s of scored) groups[Math.min(bins - 1, Math.floor(s.confidence * bins))]!.items.push(s);
  } else {
    const sorted = [...scored].sort((a, b) => a.confidence - b.confidence);
    for (let b = 0; b < bins; b++) {
      const items = sorted.slice(
        Math.floor((b * sorted.length) / bins),
        Math.floor(((b + 1) * sorted.length) / bins),
      );
      groups.push({ lower: items[0]?.confidence ?? 0, upper: items.at(-1)?.confidence ?? 0, items });
    }
  }
  return groups.map((g) => ({
    lower: g.lower,
    upper: g.upper,
    count: g.items.length,
    confidence: g.items.length ? g.items.reduce((s, i) => s + i.confidence, 0) / g.items.length : 0,
    accuracy: g.items.length ? g.items.reduce((s, i) => s + i.correct, 0) / g.items.length : 0,
  }));
}

/** Top-label ECE: Σ (n_b / n) · |accuracy_b − confidence_b|. */
export function expectedCalibrationError(
  rows: readonly LabelledDistribution[],
  bins = 10,
  binning: Binning = "equal-width",
): number {
  if (rows.length === 0) return Number.NaN;
  return reliabilityBins(rows, bins, binning).reduce(
    (sum, b) => sum + (b.count / rows.length) * Math.abs(b.accuracy - b.confidence),
    0,
  );
}

/** Multi-class Brier score: mean of Σ_k (p_k − [k = label])². */
export function brierScore(rows: readonly LabelledDistribution[]): number {
  return (
    rows.reduce(
      (sum, r) => sum + r.probabilities.reduce((s, p, k) => s + (p - (k === r.label ? 1 : 0)) ** 2, 0),
      0,
    ) / rows.length
  );
}

/** Mean negative log-likelihood of the labels (probabilities floored at 1e-12). */
export function negativeLogLikelihood(rows: readonly LabelledDistribution[]): number {
  return (
    rows.reduce((sum, r) => sum - Math.log(Math.max(r.probabilities[r.label] ?? 0, 1e-12)), 0) / rows.length
  );
}

/** Confusion counts: `matrix[label][predicted]`. */
export function confusionMatrix(rows: readonly LabelledDistribution[], options: number): number[][] {
  const matrix = Array.from({ length: options }, () => new Array<number>(options).fill(0));
  for (const r of rows) matrix[r.label]![argmax(r.probabilities)]!++;
  return matrix;
}

/** One point of the risk–coverage curve: automate everything at or above `threshold`. */
export interface CoveragePoint {
  readonly threshold: number;
  /** Share of items automated. */
  readonly coverage: number;
  /** Error rate among the automated items (0 when none is). */
  readonly risk: number;
  readonly automated: number;
}

/**
 * The risk–coverage curve, one point per distinct top probability (most confident first), and
 * its area (AURC: mean risk over the coverage levels; lower is better).
 */
export function riskCoverage(rows: readonly LabelledDistribution[]): {
  points: CoveragePoint[];
  aurc: number;
} {
  const sorted = rows
    .map((r) => {
      const top = argmax(r.probabilities);
      return { confidence: r.probabilities[top]!, wrong: top === r.label ? 0 : 1 };
    })
    .sort((a, b) => b.confidence - a.confidence);
  const points: CoveragePoint[] = [];
  let wrong = 0;
  let riskSum = 0;
  for (let i = 0; i < sorted.length; i++) {
    wrong += sorted[i]!.wrong;
    riskSum += wrong / (i + 1);
    const last = i === sorted.length - 1 || sorted[i + 1]!.confidence < sorted[i]!.confidence;
    if (last)
      points.push({
        threshold: sorted[i]!.confidence,
        coverage: (i + 1) / sorted.length,
        risk: wrong / (i + 1),
        automated: i + 1,
      });
  }
  return { points, aurc: sorted.length ? riskSum / sorted.length : Number.NaN };
}
