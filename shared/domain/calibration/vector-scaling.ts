/**
 * Vector scaling: one temperature and one offset per option, softmax(logits / T + b), fitted by
 * minimizing the negative log-likelihood plus a pull of the offsets toward 0 (`OFFSET_PENALTY`),
 * by gradient descent with backtracking on 1/T and b, held inside the ranges apply accepts (b is
 * kept centred: adding a constant to every offset changes nothing). Unlike temperature alone it
 * can remove a bias toward one option, so the chosen option may change; the calibration compares
 * it out of fold with the policy as it stands (`candidates.ts`) before proposing it.
 */
import { logSumExp } from "../probability.ts";
import { CALIBRATION_RANGES, OFFSET_PENALTY } from "./ranges.ts";
import { fitTemperature, type LabelledLogits } from "./temperature.ts";

/** A fitted vector scaling. */
export interface VectorScaling {
  readonly temperature: number;
  /** One offset per option, centred (they sum to 0). */
  readonly bias: readonly number[];
}

/** The distribution of one row under a vector scaling. */
export function applyVectorScaling(logits: readonly number[], scaling: VectorScaling): number[] {
  const z = logits.map((l, k) => l / scaling.temperature + (scaling.bias[k] ?? 0));
  const norm = logSumExp(z);
  return z.map((v) => Math.exp(v - norm));
}

/** log Σ exp(a·logits + b), and the scaled logits in `z` (reused: the fit calls this n times a step). */
function scaled(logits: readonly number[], a: number, b: readonly number[], z: number[]): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let k = 0; k < z.length; k++) {
    z[k] = a * logits[k]! + b[k]!;
    if (z[k]! > max) max = z[k]!;
  }
  let sum = 0;
  for (let k = 0; k < z.length; k++) sum += Math.exp(z[k]! - max);
  return max + Math.log(sum);
}

/** Mean NLL of softmax(a·logits + b) plus the offsets' penalty (spread over the rows). */
function loss(rows: readonly LabelledLogits[], a: number, b: readonly number[]): number {
  const z = new Array<number>(b.length);
  let total = 0;
  for (const r of rows) total += scaled(r.logits, a, b, z) - z[r.label]!;
  return (total + OFFSET_PENALTY * b.reduce((s, v) => s + v * v, 0)) / rows.length;
}

/** The gradient of {@link loss} in a and b. */
function gradient(rows: readonly LabelledLogits[], a: number, b: readonly number[]): [number, number[]] {
  const options = b.length;
  const z = new Array<number>(options);
  let ga = 0;
  const gb = b.map((v) => 2 * OFFSET_PENALTY * v);
  for (const r of rows) {
    const norm = scaled(r.logits, a, b, z);
    for (let k = 0; k < options; k++) {
      const g = Math.exp(z[k]! - norm) - (k === r.label ? 1 : 0);
      ga += g * r.logits[k]!;
      gb[k]! += g;
    }
  }
  return [ga / rows.length, gb.map((g) => g / rows.length)];
}

const clamp = (v: number, range: { readonly min: number; readonly max: number }) =>
  Math.max(range.min, Math.min(range.max, v));

/** Fits T and the offsets on `rows` (starting from the temperature-only fit). */
export function fitVectorScaling(rows: readonly LabelledLogits[], iterations = 400): VectorScaling {
  const options = rows[0]?.logits.length ?? 0;
  const t = CALIBRATION_RANGES.temperature;
  const aRange = { min: 1 / t.max, max: 1 / t.min };
  let a = 1 / fitTemperature(rows);
  let b = new Array<number>(options).fill(0);
  let current = rows.length > 0 ? loss(rows, a, b) : 0;
  let step = 1;
  for (let i = 0; i < iterations && rows.length > 0; i++) {
    const [ga, gb] = gradient(rows, a, b);
    if (Math.hypot(ga, ...gb) < 1e-9) break;
    // Backtracking: halve the step until the loss goes down, then try a larger one next time.
    let accepted = false;
    for (let tries = 0; tries < 30; tries++) {
      const nextA = clamp(a - step * ga, aRange);
      const raw = b.map((v, k) => v - step * gb[k]!);
      const mean = raw.reduce((s, v) => s + v, 0) / options;
      const nextB = raw.map((v) => clamp(v - mean, CALIBRATION_RANGES.optionBias));
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
