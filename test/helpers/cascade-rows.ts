/**
 * Labelled logits of a two-model cascade, for calibration tests: two calibrated models over four
 * options (billing, technical, legal, none; labels are billing or technical), the first with top
 * probability c = 1 − u³/2, the second surer (c = 1 − v⁶/2) and its logits at twice their scale,
 * so that its fitted temperature should be near 2. Each model's top option is wrong with chance
 * 1 − c. In production the first acted at 0.99 or above (automatable top), so the second was
 * asked only of the rest.
 */
import { SeededRandom } from "../../shared/domain/random.ts";

/** The model files the answers name. */
export const SMALL_SHA = "a".repeat(64);
export const LARGE_SHA = "b".repeat(64);

/** Logits whose softmax at temperature 1 puts `c` on option `top` of four, scaled by `scale`. */
export function logitsFor(top: number, c: number, scale: number): number[] {
  // Finite, as a model's logits are: a confidence of 1 would need an infinite one.
  const capped = Math.min(c, 1 - 1e-9);
  const l = Math.log((3 * capped) / (1 - capped));
  return [0, 1, 2, 3].map((k) => (k === top ? l * scale : 0));
}

/** One generated decision: the label, each model's logits (the second's absent where the first acted). */
export interface CascadeDecision {
  readonly index: number;
  readonly label: number;
  readonly firstLogits: number[];
  readonly secondLogits?: number[];
}

/** `n` decisions of seed `seed`. */
export function cascadeDecisions(n: number, seed: number): CascadeDecision[] {
  const random = new SeededRandom(seed);
  const answer = (label: number, c: number) =>
    random.nextFloat() < 1 - c ? (label + 1 + Math.floor(random.nextFloat() * 3)) % 4 : label;
  return Array.from({ length: n }, (_, index) => {
    const label = random.nextFloat() < 0.5 ? 0 : 1;
    const c1 = 1 - random.nextFloat() ** 3 / 2;
    const c2 = 1 - random.nextFloat() ** 6 / 2;
    const top1 = answer(label, c1);
    const top2 = answer(label, c2);
    const firstActed = top1 < 2 && c1 >= 0.99;
    return {
      index,
      label,
      firstLogits: logitsFor(top1, c1, 1),
      ...(firstActed ? {} : { secondLogits: logitsFor(top2, c2, 2) }),
    };
  });
}
