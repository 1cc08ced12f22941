/**
 * Policies: versioned definitions of one kind of decision (question, options, which options may
 * be automated, the auto threshold, the calibration temperature, the audit sample rate).
 * A change to a policy is a new version; every decision record names the version that decided.
 */
import { z } from "zod";
import { liveFields, refineLiveFields } from "./live-fields.ts";

/** Options a policy may declare (letters A..P). */
export const MAX_POLICY_OPTIONS = 16;

const optionSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -"),
    description: z.string().trim().min(1, "must not be empty"),
    /** Whether a confident decision for this option may be applied without a person. */
    automate: z.boolean(),
  })
  .strict();

/** The policy schema; see {@link parsePolicy}. */
export const policySchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "must be lowercase letters, digits and dashes"),
    version: z.number().int().min(1),
    description: z.string().optional(),
    question: z.string().trim().min(1, "must not be empty"),
    type: z.enum(["choice", "score", "noul"]),
    options: z
      .array(optionSchema)
      .min(2, "needs at least 2 options")
      .max(MAX_POLICY_OPTIONS, "at most 16 options"),
    /** Calibrated top probability at or above which a decision may be automated. */
    autoThreshold: z.number().min(0).max(1),
    /** Calibration temperature: softmax(logits / T). @default 1 */
    temperature: z.number().positive().max(100).default(1),
    /**
     * Per-option offsets added after the temperature, softmax(logits / T + b) (vector scaling,
     * proposed by `decide calibrate` when it beats temperature alone out of fold).
     */
    optionBias: z.array(z.number().finite().min(-20).max(20)).optional(),
    /**
     * The model's prior over the options on content-free inputs (`decide calibrate --prior`),
     * divided out of every decision before the temperature.
     */
    prior: z.array(z.number().gt(0).max(1)).optional(),
    /** Share of otherwise automatic decisions sent to people anyway, drawn by item id. @default 0 */
    auditSampleRate: z.number().min(0).max(1).default(0),
    /** Reviewers per audit sample: 2 asks two different people, and flags disagreement for an admin. @default 1 */
    auditReviewers: z.union([z.literal(1), z.literal(2)]).default(1),
    /** Minutes an escalated item may wait before the policy's review backlog alarm fires. */
    reviewWithinMinutes: z.number().int().positive().optional(),
    /**
     * Off-options guard: a decision whose option letters hold less than this share of the model's
     * whole next-token probability goes to people (reason `off_options`): the item fits none of
     * the options. `decide calibrate` proposes a value where it separates right from wrong.
     */
    minAllowedTokenMass: z.number().gt(0).lt(1).optional(),
    /** The option meaning "none of these fits": always escalated. */
    outOfScopeOption: z.string().optional(),
    /**
     * Option-order debiasing: "cyclic" scores each item under every rotation of the options and
     * averages per option, so the declared order no longer sways the result (n passes; the
     * endpoint then uses the state-first layout so that only options and criterion are
     * re-evaluated per rotation). @default "declared"
     */
    optionOrder: z.enum(["declared", "cyclic"]).optional(),
    /** Prompt layout; policy-first reuses the policy's preamble across items. @default "policy-first" */
    layout: z.enum(["state-first", "policy-first"]).default("policy-first"),
    /**
     * When this version was calibrated (written by a proposal): recalibration fits only labels
     * given at or after it.
     */
    calibratedAt: z.iso.datetime({ offset: true }).optional(),
    /** Conformal prediction sets (from `decide calibrate`): options at or above this probability. */
    predictionSet: z
      .object({ minProbability: z.number().min(0).max(1), targetCoverage: z.number().gt(0).lt(1) })
      .strict()
      .optional(),
    /** What calibrated decisions looked like when this version was fitted (for drift checks). */
    baseline: z
      .object({
        meanConfidence: z.number().min(0).max(1),
        escalationRate: z.number().min(0).max(1),
        optionMix: z.array(z.number().min(0).max(1)),
      })
      .strict()
      .optional(),
    // Live checking (audit bands, error budget, shadow candidate): see live-fields.ts.
    ...liveFields,
  })
  .strict()
  .superRefine((policy, ctx) => {
    refineLiveFields(policy, ctx);
    if (policy.optionBias && policy.optionBias.length !== policy.options.length)
      ctx.addIssue({
        code: "custom",
        path: ["optionBias"],
        message: `needs one offset per option (${policy.options.length}), got ${policy.optionBias.length}`,
      });
    if (policy.optionOrder === "cyclic" && policy.type === "score")
      ctx.addIssue({
        code: "custom",
        path: ["optionOrder"],
        message: "cyclic applies to choice and noul policies; a score policy's levels are ordered",
      });
    if (policy.prior && policy.prior.length !== policy.options.length)
      ctx.addIssue({
        code: "custom",
        path: ["prior"],
        message: `needs one probability per option (${policy.options.length}), got ${policy.prior.length}`,
      });
    const ids = new Set<string>();
    for (const [i, option] of policy.options.entries()) {
      if (ids.has(option.id))
        ctx.addIssue({
          code: "custom",
          path: ["options", i, "id"],
          message: `duplicate option id "${option.id}"`,
        });
      ids.add(option.id);
    }
    if (policy.outOfScopeOption !== undefined) {
      const option = policy.options.find((o) => o.id === policy.outOfScopeOption);
      if (!option)
        ctx.addIssue({ code: "custom", path: ["outOfScopeOption"], message: "must be one of the options" });
      else if (option.automate)
        ctx.addIssue({
          code: "custom",
          path: ["outOfScopeOption"],
          message: "the out-of-scope option cannot be automated",
        });
    }
    if (policy.type === "noul" && [...ids].sort().join(",") !== "false,true") {
      ctx.addIssue({
        code: "custom",
        path: ["options"],
        message: 'a noul policy has exactly the options "true" and "false"',
      });
    }
  });

/** A validated policy. */
export type Policy = z.infer<typeof policySchema>;

/** A policy file could not be used. */
export class PolicyError extends Error {
  override name = "PolicyError";
}

/** Validates a policy definition; the error names the field. */
export function parsePolicy(input: unknown, source = "policy"): Policy {
  const parsed = policySchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new PolicyError(`${source}: ${issue.path.join(".") || "policy"}: ${issue.message}`);
  }
  return parsed.data;
}

/** `id@version`, the key a decision record keeps. */
export function policyKey(policy: Pick<Policy, "id" | "version">): string {
  return `${policy.id}@${policy.version}`;
}
