/**
 * Policies: versioned definitions of one kind of decision (question, options, which options may
 * be automated, the auto threshold, the calibration temperature, the audit sample rate).
 * A change to a policy is a new version; every decision record names the version that decided.
 */
import { z } from "zod";
import {
  CALIBRATION_MAP_KEYS,
  type CalibrationMapKey,
  calibrationMapFields,
  mapFieldRange,
} from "../calibration/map-schema.ts";
import { JsonInputError, parseJsonStrict } from "../contracts/json.ts";
import {
  OPTION_ORDERS,
  optionRuleBreach,
  PROMPT_LAYOUTS,
  QUESTION_TYPES,
} from "../contracts/system-one/vocabulary.ts";
import { cascadeFields, refineCascadeFields } from "./cascade-fields.ts";
import { certificateSchema } from "./certificate-schema.ts";
import { liveFields, refineLiveFields } from "./live-fields.ts";

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
    type: z.enum(QUESTION_TYPES),
    /** 2 to 16 (letters A..P), by the option rule every System One question follows. */
    options: z.array(optionSchema),
    // The calibration map of the first model (a later tier's is its own): see calibration/map-schema.ts.
    ...calibrationMapFields,
    /** Share of otherwise automatic decisions sent to people anyway, drawn by item id. @default 0 */
    auditSampleRate: z.number().min(0).max(1).default(0),
    /** Reviewers per audit sample: 2 asks two different people, and flags disagreement for an admin. @default 1 */
    auditReviewers: z.union([z.literal(1), z.literal(2)]).default(1),
    /**
     * Reviewers per certification sample (`decide calibrate --plan --request`): 2 asks two
     * different people and sends a disagreement to an admin, and the item stays unlabelled (counted
     * against a certificate) until the label is settled; 1 lets one label settle it. @default 2
     */
    certificationReviewers: z.union([z.literal(1), z.literal(2)]).default(2),
    /** Minutes an escalated item may wait before the policy's review backlog alarm fires. */
    reviewWithinMinutes: z.number().int().positive().optional(),
    /** The option meaning "none of these fits": always escalated. */
    outOfScopeOption: z.string().optional(),
    /**
     * Option-order debiasing: "cyclic" scores each item under every rotation of the options and
     * averages per option, so the declared order no longer sways the result (n passes; the
     * endpoint then uses the state-first layout so that only options and criterion are
     * re-evaluated per rotation). @default "declared"
     */
    optionOrder: z.enum(OPTION_ORDERS).optional(),
    /** Prompt layout; policy-first reuses the policy's preamble across items. @default "policy-first" */
    layout: z.enum(PROMPT_LAYOUTS).default("policy-first"),
    /**
     * Whether the pipeline asks the endpoint for the allowed-token mass (the share of the whole
     * vocabulary the option letters hold). `false` reads the letters alone: an item under a
     * cached preamble costs about 40% less on CPU (docs/benchmarks.md), but its records carry no
     * mass, so no `minAllowedTokenMass` can guard this policy or be proposed for it. Set by a
     * person. @default true
     */
    tokenMass: z.boolean().optional(),
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
    // The models asked in order before people (the first's calibration is the fields above): cascade-fields.ts.
    ...cascadeFields,
    // ── Certified automatic action (`decide calibrate --max-auto-error`) ───────────────────────
    /** The certificate of the auto threshold (written by a proposal, see certificate-schema.ts). */
    certificate: certificateSchema.optional(),
    /**
     * Automate nothing unless the certificate matches the running model, prompt layout, policy
     * text and calibration: otherwise every item goes to people (reason `uncertified`). Set by a
     * person, never by a proposal. @default false
     */
    requireCertificate: z.boolean().optional(),
    // ── end of certified automatic action ──────────────────────────────────────────────────────
  })
  .strict()
  .superRefine((policy, ctx) => {
    refineLiveFields(policy, ctx);
    refineCascadeFields(policy, ctx);
    // The option rule of the contract: the same one the endpoint checks a request against.
    const ids = policy.options.map((option) => option.id);
    const breach = optionRuleBreach(policy.type, ids, policy.optionOrder ?? "declared");
    if (breach) {
      const path = { options: ["options"], option: ["options", breach.index!, "id"], order: ["optionOrder"] };
      ctx.addIssue({ code: "custom", path: path[breach.on], message: breach.problem });
    }
    // After the option rule: one entry per option means something once the options hold.
    refineMapFields(policy, ctx);
    // A floor on the mass needs the mass: a policy that does not ask for it cannot be guarded by it.
    if (policy.tokenMass === false) {
      const floors = [policy, ...(policy.cascade ?? [])].filter((m) => m.minAllowedTokenMass !== undefined);
      if (floors.length > 0)
        ctx.addIssue({
          code: "custom",
          path: ["tokenMass"],
          message:
            "false leaves every decision without its allowed-token mass, so minAllowedTokenMass could never be read: remove one or the other",
        });
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
  });

/** Each per-option field of the policy's calibration map holds one entry per option. */
function refineMapFields(
  policy: { readonly options: readonly unknown[] } & Partial<Record<CalibrationMapKey, unknown>>,
  ctx: z.RefinementCtx,
): void {
  const n = policy.options.length;
  for (const key of CALIBRATION_MAP_KEYS) {
    const values = policy[key];
    if (Array.isArray(values) && values.length !== n)
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `needs one ${mapFieldRange(key).each ?? "value"} per option (${n}), got ${values.length}`,
      });
  }
}

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

/**
 * Validates a policy file's text: JSON that repeats no key (JSON.parse keeps the last of two
 * silently, so a file saying `autoThreshold` twice would mean whichever came last), then the
 * policy. The error names the file, and the repeated key with its path.
 */
export function parsePolicyText(text: string, source: string): Policy {
  let json: unknown;
  try {
    json = parseJsonStrict(text);
  } catch (error) {
    if (!(error instanceof JsonInputError)) throw error;
    const where = error.param ? `${error.param}: ` : "";
    throw new PolicyError(`${source}: ${where}${error.message.replace("the body is not", "not")}`);
  }
  return parsePolicy(json, source);
}
