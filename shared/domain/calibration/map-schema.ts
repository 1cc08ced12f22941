/**
 * The one declaration of a calibration map: the fields a policy holds for its first model and
 * each later tier of a cascade holds for its own (`policy/policy.ts` and `policy/cascade-fields.ts`
 * spread them), the range a fit may propose for each, and the key lists the rest of the code
 * iterates (a tier's view of the policy, a proposal's checks) instead of naming fields. A new
 * field is added here, with its range, and nowhere else.
 */
import { z } from "zod";

/** A documented range (inclusive); `each` names one entry of a field holding one value per option. */
interface FieldRange {
  readonly min: number;
  readonly max: number;
  /** What one entry of a per-option field is called in a message ("offset 27 is outside ..."). */
  readonly each?: string;
  /** How far the entries may sum from 1, for a field that is a distribution. */
  readonly sumTolerance?: number;
}

/** Per-option offsets of vector scaling, in nats; also the box the fit is held in. */
const OFFSET_RANGE = { min: -10, max: 10, each: "offset" } as const;

/**
 * The map proper: what turns a model's raw logits into calibrated probabilities, in the
 * pipeline's order (the prior divided out, the temperature, the offsets; `map.ts` applies it).
 */
const probabilityMapFields = {
  /** Calibration temperature: softmax(logits / T). @default 1 */
  temperature: z.number().positive().max(100).default(1),
  /**
   * Per-option offsets added after the temperature, softmax(logits / T + b) (vector scaling,
   * proposed by `decide calibrate` when it beats temperature alone out of fold).
   */
  optionBias: z.array(z.number().finite().min(OFFSET_RANGE.min).max(OFFSET_RANGE.max)).optional(),
  /**
   * The model's prior over the options on content-free inputs (`decide calibrate --prior`),
   * divided out of every decision before the temperature.
   */
  prior: z.array(z.number().gt(0).max(1)).optional(),
};

/**
 * A calibration map as a policy (for its first model) or a later tier of a cascade holds it: the
 * auto threshold, the map proper, and the off-options guard, each read on that model's answers.
 */
export const calibrationMapFields = {
  /** Calibrated top probability at or above which a decision may be automated. */
  autoThreshold: z.number().min(0).max(1),
  ...probabilityMapFields,
  /**
   * Off-options guard: a decision whose option letters hold less than this share of the model's
   * whole next-token probability goes to people (reason `off_options`): the item fits none of
   * the options. `decide calibrate` proposes a value where it separates right from wrong.
   */
  minAllowedTokenMass: z.number().gt(0).lt(1).optional(),
};

/** One field of a calibration map. */
export type CalibrationMapKey = keyof typeof calibrationMapFields;

/** The calibration map's fields, in declaration order: what every loop over a map's fields reads. */
export const CALIBRATION_MAP_KEYS = Object.keys(calibrationMapFields) as CalibrationMapKey[];

/** The fields of the map proper (what `calibratedProbabilities` applies). */
export const PROBABILITY_MAP_KEYS = Object.keys(
  probabilityMapFields,
) as (keyof typeof probabilityMapFields)[];

/** Whether `key` names a field of a calibration map. */
export function isCalibrationMapKey(key: string): key is CalibrationMapKey {
  return (CALIBRATION_MAP_KEYS as readonly string[]).includes(key);
}

/** The map proper as parsed. */
type ParsedProbabilityMap = z.output<z.ZodObject<typeof probabilityMapFields>>;

/** An array as read-only (a map is read, never changed in place); anything else as it is. */
type ReadOnlyEntries<V> = V extends readonly (infer E)[] ? readonly E[] : V;

/** The map proper, as the fitters and `calibratedProbabilities` pass it around. */
export type CalibrationMap = {
  readonly [K in keyof ParsedProbabilityMap]: ReadOnlyEntries<ParsedProbabilityMap[K]>;
};

/**
 * Documented range of each field of the map: what a fit may propose, what `decide calibrate
 * --apply-proposal` accepts, what the fitters are bounded to. Narrower than the schema, which
 * takes what a person writes. The type system asks for exactly one entry per field.
 */
export const CALIBRATION_MAP_RANGES = {
  /** Below 0.5 the top option is more often wrong than right, however well calibrated. */
  autoThreshold: { min: 0.5, max: 1 },
  /** softmax(logits / T); also the bounds of the temperature search. */
  temperature: { min: 0.05, max: 20 },
  optionBias: OFFSET_RANGE,
  /** Each prior probability (one per option); together they sum to 1 within `sumTolerance`. */
  prior: { min: 1e-6, max: 1, each: "probability", sumTolerance: 0.01 },
  /** The off-options floor on the allowed-token mass. */
  minAllowedTokenMass: { min: 0.001, max: 0.95 },
} as const satisfies Record<CalibrationMapKey, FieldRange>;

/** The documented range of a field of the map, with what one entry is called where it holds one per option. */
export function mapFieldRange(key: CalibrationMapKey): FieldRange {
  return CALIBRATION_MAP_RANGES[key];
}

/** The fields `keys` of a calibration map that `source` holds, in declaration order (absent ones left out). */
export function mapFieldsOf(
  source: Partial<Record<CalibrationMapKey, unknown>>,
  keys: readonly CalibrationMapKey[] = CALIBRATION_MAP_KEYS,
): Partial<Record<CalibrationMapKey, unknown>> {
  return Object.fromEntries(keys.flatMap((key) => (source[key] === undefined ? [] : [[key, source[key]]])));
}

/**
 * `target` with the calibration map's fields `keys` taken from `source`: each one `source` holds is
 * copied, each one it lacks is dropped (a tier never inherits the policy's prior or offsets);
 * every other field of `target` is kept.
 */
export function withMapFields<T extends object>(
  target: T,
  source: Partial<Record<CalibrationMapKey, unknown>>,
  keys: readonly CalibrationMapKey[] = CALIBRATION_MAP_KEYS,
): T {
  const replaced = new Set<string>(keys);
  const kept = Object.entries(target).filter(([key]) => !replaced.has(key));
  return { ...Object.fromEntries(kept), ...mapFieldsOf(source, keys) } as T;
}
