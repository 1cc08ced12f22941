/**
 * Temperature scaling: one T per policy, fitted by minimizing the negative log-likelihood of
 * softmax(logits / T) with a bounded golden-section search on log T, and evaluated out of fold
 * (grouped k-fold, so near-duplicate items never sit on both sides). The chosen option never changes.
 */
import { createHash } from "node:crypto";
import { softmax } from "../probability.ts";
import type { LabelKind } from "./certificate/certificate-units.ts";
import { type LabelledDistribution, negativeLogLikelihood } from "./metrics.ts";
import { CALIBRATION_RANGES } from "./ranges.ts";

/** One labelled item with its raw option logits. */
export interface LabelledLogits {
  readonly logits: readonly number[];
  readonly label: number;
  /** Items of one group are kept in one fold, and count once in a certificate. @default each item its own group */
  readonly group?: string;
  /** The item's own name (a group's representative is drawn by it). @default its position */
  readonly key?: string;
  /** How it came to be labelled (a certificate says how many of each kind it used). @default "file" */
  readonly kind?: LabelKind;
  /** Its chance of being labelled: a certificate weights it by the inverse. @default 1 */
  readonly inclusionProbability?: number;
  /** The model file that gave the logits, where known (a certificate names it). */
  readonly modelSha256?: string;
  /** The prompt layout version they were scored under, where known. */
  readonly promptVersion?: string;
}

// Bounds of the search: the range apply accepts.
const MIN_TEMPERATURE = CALIBRATION_RANGES.temperature.min;
const MAX_TEMPERATURE = CALIBRATION_RANGES.temperature.max;

/** The distributions at temperature `t`. */
export function applyTemperature(rows: readonly LabelledLogits[], t: number): LabelledDistribution[] {
  return rows.map((r) => ({ probabilities: softmax(r.logits, t), label: r.label }));
}

/**
 * The temperature minimizing NLL on `rows`; with `toward`, plus a pull of log T toward
 * `toward.temperature` of `toward.strength` · (log T − log T0)² on the summed NLL.
 */
export function fitTemperature(
  rows: readonly LabelledLogits[],
  toward?: { readonly temperature: number; readonly strength: number },
): number {
  if (rows.length === 0) return toward?.temperature ?? 1;
  const pull = (logT: number) =>
    toward ? (toward.strength * (logT - Math.log(toward.temperature)) ** 2) / rows.length : 0;
  const loss = (logT: number) => negativeLogLikelihood(applyTemperature(rows, Math.exp(logT))) + pull(logT);
  let lo = Math.log(MIN_TEMPERATURE);
  let hi = Math.log(MAX_TEMPERATURE);
  const phi = (Math.sqrt(5) - 1) / 2;
  let a = hi - phi * (hi - lo);
  let b = lo + phi * (hi - lo);
  let fa = loss(a);
  let fb = loss(b);
  for (let i = 0; i < 80 && hi - lo > 1e-7; i++) {
    if (fa < fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - phi * (hi - lo);
      fa = loss(a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + phi * (hi - lo);
      fb = loss(b);
    }
  }
  return Math.exp((lo + hi) / 2);
}

/** The fold (0..k-1) of a group, stable across runs. */
export function foldOf(group: string, folds: number): number {
  return createHash("sha256").update(group).digest().readUInt32BE(0) % folds;
}

/**
 * Out-of-fold calibrated distributions: each fold is calibrated with a temperature fitted on the
 * other folds. Returns them in input order, with the per-fold temperatures.
 */
export function outOfFold(
  rows: readonly LabelledLogits[],
  folds = 5,
): { calibrated: LabelledDistribution[]; temperatures: number[] } {
  const fold = rows.map((r, i) => foldOf(r.group ?? String(i), folds));
  const calibrated = new Array<LabelledDistribution>(rows.length);
  const temperatures: number[] = [];
  for (let f = 0; f < folds; f++) {
    const train = rows.filter((_, i) => fold[i] !== f);
    const t = fitTemperature(train);
    temperatures.push(t);
    rows.forEach((r, i) => {
      if (fold[i] === f) calibrated[i] = { probabilities: softmax(r.logits, t), label: r.label };
    });
  }
  return { calibrated, temperatures };
}
