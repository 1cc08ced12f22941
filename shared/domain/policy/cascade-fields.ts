/**
 * The policy fields of a cascade: the model that answers first (`model`) and the models asked
 * after it, in order, before people (`cascade`). Each later tier has its own calibration and
 * auto threshold, since each model's probabilities mean something of their own; the policy's
 * top-level calibration fields are the first tier's. An item goes to the next tier only when the
 * tier before is not confident enough to act (`shared/domain/cascade.ts`).
 */
import { z } from "zod";
import { CALIBRATION_MAP_KEYS, calibrationMapFields } from "../calibration/map-schema.ts";

/** Most models a policy may ask before people: the first and up to three more. */
export const MAX_TIERS = 4;

/** A model name as the endpoint serves it (`decide serve --model-name`, `--extra-model NAME=PATH`). */
const modelName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    "must be a model name the endpoint serves (letters, digits, . _ : -)",
  );

/** One later tier: its model, its calibration map and its auto threshold. */
const tierSchema = z
  .object({
    /** The model the endpoint serves under this name (the request's `model`). */
    model: modelName,
    // Its calibration map, read on this model's answers: see calibration/map-schema.ts.
    ...calibrationMapFields,
  })
  .strict();

/** A later tier of a cascade, validated. */
export type CascadeTier = z.infer<typeof tierSchema>;

/** The cascade fields, spread into the policy schema. */
export const cascadeFields = {
  /**
   * The model that answers first, by the name the endpoint serves it under. @default the
   * endpoint's own model (a request without `model`)
   */
  model: modelName.optional(),
  /**
   * Models asked after the first, in order, when the tier before is not confident enough to act
   * (below its threshold, an option never automated, off-options mass, out of scope); the last
   * tier's uncertain items go to people.
   */
  cascade: z
    .array(tierSchema)
    .min(1)
    .max(MAX_TIERS - 1)
    .optional(),
};

/** What {@link refineCascadeFields} reads. */
interface CascadePolicy {
  readonly options: readonly unknown[];
  readonly model?: string | undefined;
  readonly cascade?: readonly CascadeTier[] | undefined;
}

/** Cross-field rules of a cascade: one offset and prior entry per option, each model once. */
export function refineCascadeFields(policy: CascadePolicy, ctx: z.RefinementCtx): void {
  const n = policy.options.length;
  const seen = new Set(policy.model ? [policy.model] : []);
  for (const [i, tier] of (policy.cascade ?? []).entries()) {
    // A field of the tier's map that holds an array holds one value per option.
    for (const field of CALIBRATION_MAP_KEYS) {
      const values = tier[field];
      if (Array.isArray(values) && values.length !== n)
        ctx.addIssue({
          code: "custom",
          path: ["cascade", i, field],
          message: `needs one value per option (${n}), got ${values.length}`,
        });
    }
    if (seen.has(tier.model))
      ctx.addIssue({
        code: "custom",
        path: ["cascade", i, "model"],
        message: `"${tier.model}" is asked earlier in the cascade: each tier needs a model of its own`,
      });
    seen.add(tier.model);
  }
}
