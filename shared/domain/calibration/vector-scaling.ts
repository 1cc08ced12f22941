/**
 * Vector scaling: one temperature and one offset per option, softmax(logits / T + b), fitted by
 * minimizing the negative log-likelihood (gradient descent with backtracking on 1/T and b, b kept
 * centred since adding a constant to every offset changes nothing). Unlike temperature alone it
 * can remove a bias toward one option, so the chosen option may change; it is evaluated out of
 * fold with the same grouped folds and proposed only when its out-of-fold NLL is lower.
 */
import { logSumExp } from "../probability.ts";
import type { LabelledDistribution } from "./metrics.ts";
import { fitTemperature, foldOf, type LabelledLogits } from "./temperature.ts";

/** A fitted vector scaling. */
export interface VectorScaling {
  readonly temperature: number;
  /** One offset per option, centred (they sum to 0). */
  readonly bias: number[];
}

/** The distribution of one row under a vector scaling. */
export function applyVectorScaling(logits: readonly number[], scaling: VectorScaling): number[] {
  const z = logits.map((l, k) => l / scaling.temperature + (scaling.bias[k] ?? 0));
  const norm = logSumExp(z);
  return z.map((v) => Math.exp(v - norm));
}

function loss(rows: readonly LabelledLogits[], a: number, b: readonly number[]): number {
  let total = 0;
  for (const r of rows) {
    const z = r.logits.map((l, k) => a * l + b[k]!);
    total += logSumExp(z) - z[r.label]!;
  }
  return total / rows.length;
}

/** Fits T and the offsets on `rows` (starting from the temperature-only fit). */
export function fitVectorScaling(rows: readonly LabelledLogits[], iterations = 400): VectorScaling {
  const options = rows[0]?.logits.length ?? 0;
  let a = 1 / fitTemperature(rows);
  let b = new Array<number>(options).fill(0);
  let current = loss(rows, a, b);
  let step = 1;
  for (let i = 0; i < iterations && rows.length > 0; i++) {
    let ga = 0;
    const gb = new Array<number>(options).fill(0);
    for (const r of rows) {
      const z = r.logits.map((l, k) => a * l + b[k]!);
      const norm = logSumExp(z);
      for (let k = 0; k < options; k++) {
        const g = Math.exp(z[k]! - norm) - (k === r.label ? 1 : 0);
        ga += g * r.logits[k]!;
        gb[k]! += g;
      }
    }
    ga /= rows.length;
    for (let k = 0; k < options; k++) gb[k] = gb[k]! / rows.length;
    const size = Math.hypot(ga, ...gb);
    if (size < 1e-9) break;
    // Backtracking: halve the step until the loss goes down, then try a larger one next time.
    let accepted = false;
    for (let tries = 0; tries < 30; tries++) {
      const nextA = Math.max(1 / 20, Math.min(20, a - step * ga));
      const raw = b.map((v, k) => v - step * gb[k]!);
      const mean = raw.reduce((s, v) => s + v, 0) / options;
      const nextB = raw.map((v) => v - mean);
      const next = loss(rows, nextA, nextB);
      if (next < current) {
        a = nextA;
        b = nextB;
        current = next;
        step *= 1.5;
        accepted = true;
        break;
      }
      step /= 2;
    }
    if (!accepted) break;
  }
  return { temperature: 1 / a, bias: b };
}

/** Out-of-fold distributions under vector scaling (each fold fitted on the others). */
export function outOfFoldVector(rows: readonly LabelledLogits[], folds = 5): LabelledDistribution[] {
  const fold = rows.map((r, i) => foldOf(r.group ?? String(i), folds));
  const calibrated = new Array<LabelledDistribution>(rows.length);
  for (let f = 0; f < folds; f++) {
    const scaling = fitVectorScaling(rows.filter((_, i) => fold[i] !== f));
    rows.forEach((r, i) => {
      if (fold[i] === f)
        calibrated[i] = { probabilities: applyVectorScaling(r.logits, scaling), label: r.label };
    });
  }
  return calibrated;
}
