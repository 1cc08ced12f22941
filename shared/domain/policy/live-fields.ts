/**
 * The policy fields of live checking, kept apart from the rest of the schema: audit sampling
 * stratified by confidence band (each band its own inclusion probability, so that audits
 * estimate the rate of wrong automatic actions without bias), the error budget the daily audit
 * alarm watches, and a shadow candidate scored beside the live version without acting on it.
 * None of these is a calibration field: they change only through a policy file a person writes.
 */
import { z } from "zod";

/** Most audit bands a policy may declare. */
export const MAX_AUDIT_BANDS = 8;

/** The live-checking fields, spread into the policy schema. */
export const liveFields = {
  /**
   * Audit sampling by confidence band, replacing the flat `auditSampleRate`: `edges` cut the
   * calibrated top probability into bands (`p < edges[0]`, `edges[0] ≤ p < edges[1]`, …,
   * `p ≥ edges[last]`) and `rates[i]` is the share of band i's otherwise automatic decisions sent
   * to people for audit. Every rate is above 0, so every automated decision can be drawn and the
   * estimate covers them all (a band never audited would be invisible to it).
   */
  auditBands: z
    .object({
      edges: z
        .array(z.number().gt(0).lt(1))
        .min(1)
        .max(MAX_AUDIT_BANDS - 1),
      rates: z.array(z.number().gt(0).max(1)).min(2).max(MAX_AUDIT_BANDS),
    })
    .strict()
    .optional(),
  /**
   * The error budget: the highest acceptable rate of wrong automatic actions. The daily audit
   * estimate's upper confidence bound above it raises the policy's alarm.
   */
  maxAutoError: z.number().gt(0).lt(1).optional(),
  /**
   * A shadow candidate: another version of this policy (one marked `candidate`) that the decide
   * path also scores for a `share` of items (drawn by item id), storing its distribution on the
   * record beside the live one and taking no action on it. @default share 0 (never scored)
   */
  shadow: z
    .object({ version: z.number().int().min(1), share: z.number().min(0).max(1).default(0) })
    .strict()
    .optional(),
  /**
   * A candidate version: loaded and addressable by its version (a shadow, `decide what-if`), but
   * never the version that decides items, whatever its number.
   */
  candidate: z.boolean().optional(),
};

/** What {@link refineLiveFields} reads. */
interface LivePolicy {
  readonly version: number;
  readonly auditSampleRate: number;
  readonly auditBands?: { readonly edges: readonly number[]; readonly rates: readonly number[] } | undefined;
  readonly shadow?: { readonly version: number } | undefined;
  readonly candidate?: boolean | undefined;
}

/** Cross-field rules of the live-checking fields; each issue names its field. */
export function refineLiveFields(policy: LivePolicy, ctx: z.RefinementCtx): void {
  const bands = policy.auditBands;
  if (bands) {
    if (bands.rates.length !== bands.edges.length + 1)
      ctx.addIssue({
        code: "custom",
        path: ["auditBands", "rates"],
        message: `needs one rate per band: ${bands.edges.length + 1} for ${bands.edges.length} edges, got ${bands.rates.length}`,
      });
    if (bands.edges.some((edge, i) => i > 0 && edge <= bands.edges[i - 1]!))
      ctx.addIssue({ code: "custom", path: ["auditBands", "edges"], message: "must be strictly increasing" });
    if (policy.auditSampleRate !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["auditBands"],
        message: "replaces auditSampleRate: give one of them, not both",
      });
  }
  if (policy.shadow && policy.shadow.version === policy.version)
    ctx.addIssue({
      code: "custom",
      path: ["shadow", "version"],
      message: "must name another version than the policy's own",
    });
  if (policy.shadow && policy.candidate)
    ctx.addIssue({
      code: "custom",
      path: ["shadow"],
      message: "a candidate version cannot have a shadow itself",
    });
}
