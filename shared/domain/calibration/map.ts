/**
 * The calibration map a policy version applies to the endpoint's raw logits, in the pipeline's
 * order: the prior divided out (when it carries one), then the temperature, then the per-option
 * offsets of vector scaling (when it carries them). The decide path, shadow scoring, `decide
 * what-if` and the calibration's comparison with the policy as it stands all go through this one
 * function.
 */
import { softmax } from "../probability.ts";
import { type CalibrationMap, mapFieldsOf, PROBABILITY_MAP_KEYS } from "./map-schema.ts";
import { correctForPrior } from "./prior.ts";
import { applyVectorScaling } from "./vector-scaling.ts";

/** The map proper of a policy version or a tier: its fields are declared in `map-schema.ts`. */
export type { CalibrationMap } from "./map-schema.ts";

/** Calibrated probabilities (in option order) of raw logits under `map`. */
export function calibratedProbabilities(logits: readonly number[], map: CalibrationMap): number[] {
  const corrected = map.prior ? correctForPrior(logits, map.prior) : logits;
  return map.optionBias
    ? applyVectorScaling(corrected, { temperature: map.temperature, bias: map.optionBias })
    : softmax(corrected, map.temperature);
}

/** Just the map of a policy (or any object carrying its fields). */
export function mapOf(policy: CalibrationMap): CalibrationMap {
  return mapFieldsOf(policy, PROBABILITY_MAP_KEYS) as CalibrationMap;
}
