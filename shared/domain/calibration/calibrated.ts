/**
 * A policy's calibration applied to raw option logits, in the order the pipeline applies it: the
 * prior divided out first (when the policy carries one), then the temperature, then the
 * per-option offsets of vector scaling (when it carries them). The decide path, shadow scoring
 * and `decide what-if` all calibrate through this one function.
 */
import type { Policy } from "../policy/policy.ts";
import { softmax } from "../probability.ts";
import { correctForPrior } from "./prior.ts";
import { applyVectorScaling } from "./vector-scaling.ts";

/** The calibrated distribution of `logits` (in the policy's option order) under `policy`. */
export function calibratedProbabilities(
  policy: Pick<Policy, "prior" | "temperature" | "optionBias">,
  logits: readonly number[],
): number[] {
  const corrected = policy.prior ? correctForPrior(logits, policy.prior) : logits;
  return policy.optionBias
    ? applyVectorScaling(corrected, { temperature: policy.temperature, bias: policy.optionBias })
    : softmax(corrected, policy.temperature);
}
