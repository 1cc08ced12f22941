/**
 * Label-free prior correction, in the spirit of contextual calibration for LLM classifiers: the
 * model's preference among the options with no evidence at all is estimated by scoring
 * content-free inputs ("N/A", a mask token, a dash; an empty item is refused by the scorer) under the policy, and divided out of
 * every decision (its log subtracted from the logits) before the temperature. It needs no labels;
 * the calibration report shows what it changes on the labelled sample.
 */
import { softmax } from "../probability.ts";

/** The content-free items scored to estimate a policy's prior. */
export const CONTENT_FREE_STATES = ["N/A", "[MASK]", "-"] as const;

/** The prior: the mean distribution over the options on content-free inputs (their raw logits). */
export function estimatePrior(contentFreeLogits: readonly (readonly number[])[]): number[] {
  if (contentFreeLogits.length === 0)
    throw new RangeError("the prior needs at least one content-free answer");
  const options = contentFreeLogits[0]!.length;
  const sum = new Array<number>(options).fill(0);
  for (const logits of contentFreeLogits) {
    const probabilities = softmax(logits);
    probabilities.forEach((p, k) => {
      sum[k] = (sum[k] ?? 0) + p;
    });
  }
  return sum.map((s) => s / contentFreeLogits.length);
}

/** Logits with the prior divided out (subtracted in log space); a floor keeps a zero finite. */
export function correctForPrior(logits: readonly number[], prior: readonly number[]): number[] {
  return logits.map((l, k) => l - Math.log(Math.max(prior[k] ?? 1, 1e-6)));
}
