/**
 * Choosing the auto-action threshold from labelled data: either the largest coverage whose
 * automated accuracy still meets a target (judged by the lower end of its 95% Wilson interval,
 * so few labels mean a cautious threshold), or the lowest expected cost from a cost matrix. With
 * few labels a floor on the human share is kept and the result says so.
 */
import { argmax } from "../probability.ts";
import type { CertificateGoal } from "./certificate/certificate.ts";
import type { LabelledDistribution } from "./metrics.ts";
import { wilsonInterval } from "./uncertainty.ts";

/** How to choose from the risk–coverage curve. */
export type RankedGoal =
  | { readonly kind: "target-accuracy"; readonly accuracy: number }
  | { readonly kind: "cost"; readonly wrongAutomatic: number; readonly humanReview: number };

/**
 * How to choose: from the curve, or certified (`certificate.ts`: the lowest threshold whose rate
 * of wrong automatic actions has an upper confidence bound under `maxError`).
 */
export type ThresholdGoal = RankedGoal | ({ readonly kind: "max-auto-error" } & CertificateGoal);

/** Options of {@link chooseThreshold}. */
export interface ThresholdOptions {
  /** Below this many labels the floor applies. @default 200 */
  readonly fewLabels?: number;
  /** Human share kept at least when labels are few. @default 0.2 */
  readonly humanFloor?: number;
  /**
   * Whether each row's top option may be automated at all (in the rows' order): the others stay
   * with people whatever their confidence, so they count toward neither the coverage nor the
   * automated accuracy. @default every row
   */
  readonly automatable?: readonly boolean[];
}

/** The chosen threshold and what it implies on the labelled data. */
export interface ThresholdChoice {
  readonly threshold: number;
  readonly coverage: number;
  readonly automatedAccuracy: number;
  /** 95% interval of the automated accuracy. */
  readonly automatedAccuracyInterval: [number, number];
  readonly expectedCostPerItem?: number;
  readonly labels: number;
  /** Plain-language caveats (few labels, floor applied, target unreachable). */
  readonly notes: string[];
}

/** Chooses the threshold on calibrated distributions. */
export function chooseThreshold(
  rows: readonly LabelledDistribution[],
  goal: RankedGoal,
  options: ThresholdOptions = {},
): ThresholdChoice {
  const fewLabels = options.fewLabels ?? 200;
  const floor = rows.length < fewLabels ? (options.humanFloor ?? 0.2) : 0;
  const notes: string[] = [];
  if (floor > 0)
    notes.push(
      `only ${rows.length} labels (fewer than ${fewLabels}): at least ${Math.round(floor * 100)}% of items stay with people`,
    );
  const sorted = rows
    .flatMap((r, i) => {
      if (options.automatable?.[i] === false) return [];
      const top = argmax(r.probabilities);
      return [{ confidence: r.probabilities[top]!, correct: top === r.label }];
    })
    .sort((a, b) => b.confidence - a.confidence);
  const n = rows.length;
  const maxAutomated = Math.min(sorted.length, Math.floor(n * (1 - floor)));
  // Candidate k: automate the k most confident items (only where the next one is less confident).
  let best: { k: number; score: number } = { k: 0, score: goal.kind === "cost" ? goal.humanReview : 0 };
  let correct = 0;
  for (let k = 1; k <= maxAutomated; k++) {
    correct += sorted[k - 1]!.correct ? 1 : 0;
    if (k < sorted.length && sorted[k]!.confidence === sorted[k - 1]!.confidence) continue;
    if (goal.kind === "target-accuracy") {
      if (wilsonInterval(correct, k)[0] >= goal.accuracy) best = { k, score: k };
    } else {
      const cost = ((k - correct) * goal.wrongAutomatic + (n - k) * goal.humanReview) / n;
      if (cost < best.score) best = { k, score: cost };
    }
  }
  const k = best.k;
  const automatedCorrect = sorted.slice(0, k).filter((s) => s.correct).length;
  if (k === 0) {
    notes.push(
      goal.kind === "target-accuracy"
        ? `no threshold reaches ${goal.accuracy} automated accuracy with 95% confidence on these labels: everything goes to people`
        : "automating nothing is cheapest on these labels",
    );
  }
  return {
    // Automate at or above the k-th confidence; above 1 means nothing is automated.
    threshold: k === 0 ? 1.000001 : sorted[k - 1]!.confidence,
    coverage: n ? k / n : 0,
    automatedAccuracy: k ? automatedCorrect / k : Number.NaN,
    automatedAccuracyInterval: wilsonInterval(automatedCorrect, k),
    ...(goal.kind === "cost" ? { expectedCostPerItem: best.score } : {}),
    labels: n,
    notes,
  };
}
