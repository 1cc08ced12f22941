/**
 * The fields a calibration owns and the documented range of each: what a fit may propose, what
 * `decide calibrate --apply-proposal` accepts, and what the fitters are bounded to. One
 * definition, so that a fit can never propose what apply refuses (docs/calibration.md, "Ship a policy change
 * safely"). Everything else in a policy (question, options, routing, audit settings) changes only
 * through a policy file written by a person.
 */
import { CALIBRATION_MAP_KEYS, CALIBRATION_MAP_RANGES } from "./map-schema.ts";

/**
 * Documented range of each calibration field (inclusive unless said otherwise): the calibration
 * map's own (`map-schema.ts`), the prediction sets' and the certificate's goal.
 */
export const CALIBRATION_RANGES = {
  ...CALIBRATION_MAP_RANGES,
  /** Conformal prediction sets: the probability cut-off and the coverage it was fitted for. */
  predictionSetMinProbability: { min: 0, max: 1 },
  predictionSetCoverage: { min: 0.5, max: 0.999 },
  /** A certificate's target rate of wrong automatic actions, and its confidence. */
  certificateMaxError: { min: 0.0001, max: 0.5 },
  certificateConfidence: { min: 0.5, max: 0.9999 },
} as const;

/**
 * What a calibration proposal may change: the calibration map's fields (`map-schema.ts`) and the
 * fit's companions; any other field is refused by apply, by name.
 */
export const CALIBRATION_FIELDS = [
  ...CALIBRATION_MAP_KEYS,
  "predictionSet",
  "certificate",
  // Bookkeeping a proposal writes along with the fit: the drift baseline and when it was fitted.
  "baseline",
  "calibratedAt",
] as const;

/** One field a calibration proposal may change. */
export type CalibrationField = (typeof CALIBRATION_FIELDS)[number];

/** Fewest labels calibration fits at all (the fit needs folds). */
export const MIN_FIT_LABELS = 10;

/** Labels every option needs before vector scaling is tried (an offset needs its option seen). */
export const MIN_LABELS_PER_OPTION = 20;

/**
 * Strength of the pull of the offsets toward 0: a penalty of λ·Σb² on the summed NLL, a Gaussian
 * prior of standard deviation 1/√(2λ) ≈ 0.7 nats per offset. It dominates on a few dozen labels
 * (separable data no longer sends an offset to infinity) and vanishes on thousands.
 */
export const OFFSET_PENALTY = 1;

/**
 * Strength of the pull of a refitted log T toward the version's own: λ·(log T − log T0)² on the
 * summed NLL, a Gaussian prior of standard deviation 1/√(2λ) ≈ 0.41 on log T. Without it, 20
 * labels the model got all right fit T at the range's floor (0.05: the likelihood only says
 * "sharper"); with it they move T by a few percent. On hundreds of labels it vanishes.
 */
export const TEMPERATURE_PULL = 3;

/** Whether `value` lies in the documented range. */
export function inRange(value: number, range: { readonly min: number; readonly max: number }): boolean {
  return Number.isFinite(value) && value >= range.min && value <= range.max;
}
