/**
 * The certificate a policy version carries once `decide calibrate --max-auto-error` certified its
 * auto threshold: the target and confidence, what the labels showed, and what it was certified
 * on (the model file, the prompt layout version, the policy text, the calibration and the label
 * set, by hash), so that the decide path and `decide status` can tell when it no longer applies.
 */
import { z } from "zod";
import { CALIBRATION_RANGES } from "../calibration/ranges.ts";

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "must be a SHA-256 in hex");
const range = (r: { readonly min: number; readonly max: number }) => z.number().min(r.min).max(r.max);

/** The method every certificate names (docs/calibration.md, "Ship a policy change safely"). */
export const CERTIFICATE_METHOD = "learn-then-test fixed-sequence, Clopper-Pearson";

/**
 * The method a registered certificate names: a plan written with its certification sample, tested
 * exactly on that sample (`shared/domain/calibration/certificate/registered-certificate.ts`).
 */
export const REGISTERED_METHOD = "pre-registered sample";

/**
 * Where a certificate's labels are, so that they can be read back and the certificate recomputed
 * on them: the reviewed decisions of one policy version labelled in a window of the decisions
 * table, or a labelled file (checked only where that file is given again).
 */
export const labelSourceSchema = z.discriminatedUnion("kind", [
  z
    .object({
      kind: z.literal("table"),
      /** The version whose decisions were labelled (the one the proposal replaces). */
      policyVersion: z.number().int().min(1),
      /** Labels given at or after this time; null: all of that version's labels. */
      since: z.iso.datetime({ offset: true }).nullable(),
      /** Labels given at or before this time (when the certificate was made). */
      until: z.iso.datetime({ offset: true }),
    })
    .strict(),
  z.object({ kind: z.literal("file") }).strict(),
  z
    .object({
      kind: z.literal("sample"),
      /** The version whose decisions the sample drew (the one the proposal replaces). */
      policyVersion: z.number().int().min(1),
      /** The certification sample's id: its drawn records carry the plan. */
      sample: z.string().min(1),
      /** Labels given at or before this time (when the certificate was made). */
      until: z.iso.datetime({ offset: true }),
    })
    .strict(),
]);

/** Where a certificate's labels are. */
export type LabelSource = z.infer<typeof labelSourceSchema>;

/**
 * How the bound was computed, with what recomputing it needs: the exact binomial bound of
 * `errors` in `units`, or the Fay–Feuer bound of units weighted by what they stand for (weights
 * scaled to sum to 1: the weight of the wrong units, of their squares, and the largest one).
 */
const evidenceSchema = z
  .object({
    method: z.enum(["clopper-pearson", "fay-feuer"]),
    units: z.number().int().min(0),
    errors: z.number().int().min(0),
    weightedErrors: z.number().min(0).max(1).optional(),
    squaredErrorWeights: z.number().min(0).max(1).optional(),
    maxWeight: z.number().gt(0).max(1).optional(),
  })
  .strict();

/** Labelled items at or above the threshold by how they came to be labelled. */
const kindsSchema = z
  .object({
    escalation: z.number().int().min(0),
    audit: z.number().int().min(0),
    certification: z.number().int().min(0),
    file: z.number().int().min(0),
  })
  .strict();

/**
 * What one tier of a cascade's certificate was certified on: its model (name and file), prompt
 * layout, threshold and calibration (by hash), so that a changed tier makes the whole
 * certificate stale (its budget is over every tier's automatic actions together).
 */
const tierCertificateSchema = z
  .object({
    /** The model's name as the policy names it; absent for the endpoint's own (a first tier without `model`). */
    model: z.string().min(1).optional(),
    modelSha256: sha256.nullable(),
    promptVersion: z.string().min(1).nullable(),
    threshold: z.number().min(0).max(1),
    /** This tier's calibration map and threshold (`calibrationSha256` of the tier). */
    calibrationSha256: sha256,
  })
  .strict();

/**
 * What a registered certificate rests on: its plan's sample, the decisions drawn, those not
 * labelled (counted as wrong), which plan of the version it was, and the level it was tested at
 * (its bound is at this level; the claim is at `confidence`).
 */
const registeredSchema = z
  .object({
    sample: z.string().min(1),
    n: z.number().int().min(1),
    unlabelled: z.number().int().min(0),
    round: z.number().int().min(1),
    level: z.number().gt(0).lt(1),
  })
  .strict();

/** A policy version's certificate. */
export const certificateSchema = z
  .object({
    /** Highest rate of wrong automatic actions certified. */
    maxError: range(CALIBRATION_RANGES.certificateMaxError),
    confidence: range(CALIBRATION_RANGES.certificateConfidence),
    /** Learn-then-test on the labels held, or a pre-registered sample ({@link REGISTERED_METHOD}). */
    method: z.enum([CERTIFICATE_METHOD, REGISTERED_METHOD]),
    /** A registered certificate's plan and sample; absent on learn-then-test ones. */
    registered: registeredSchema.optional(),
    /** The certified threshold; null: none qualified, so nothing is automated. */
    threshold: z.number().min(0).max(1).nullable(),
    /** The upper bound on the labels at the threshold. */
    bound: z.number().min(0).max(1).nullable(),
    /** How the bound was computed (absent on certificates made before: exact binomial of the counts). */
    evidence: evidenceSchema.optional(),
    kinds: kindsSchema.optional(),
    automated: z.number().int().min(0),
    errors: z.number().int().min(0),
    labels: z.number().int().min(1),
    coverage: z.number().min(0).max(1),
    /** The model file the labelled logits came from; null when the labels did not say. */
    modelSha256: sha256.nullable(),
    /** The prompt layout version they were scored under; null when the labels did not say. */
    promptVersion: z.string().min(1).nullable(),
    /** The policy's question, options and layout. */
    policySha256: sha256,
    /** The calibration map and the auto threshold. */
    calibrationSha256: sha256,
    /** The labelled set (item, label, logits). */
    labelsSha256: sha256,
    /** Where that set is; absent on certificates made before it was recorded (they cannot be checked). */
    labelSource: labelSourceSchema.optional(),
    certifiedAt: z.iso.datetime({ offset: true }),
    /**
     * A cascade's certificate: every tier, first to last, the first's entry matching the fields
     * above; its counts and bound are over every tier's automatic actions together. Absent: the
     * certificate speaks for the first tier alone.
     */
    tiers: z.array(tierCertificateSchema).min(2).optional(),
  })
  .strict()
  .superRefine((c, context) => {
    // One kind, said three ways that must agree: a certificate naming the registered method but
    // recomputed from the reviewed list (or the other way round) would pass as the kind it is not.
    const registered = c.method === REGISTERED_METHOD;
    if (registered !== (c.registered !== undefined))
      context.addIssue({
        code: "custom",
        path: ["registered"],
        message: registered
          ? `a "${REGISTERED_METHOD}" certificate names its plan's sample`
          : `only a "${REGISTERED_METHOD}" certificate names a plan's sample`,
      });
    if (c.labelSource && registered !== (c.labelSource.kind === "sample"))
      context.addIssue({
        code: "custom",
        path: ["labelSource", "kind"],
        message: registered
          ? `a "${REGISTERED_METHOD}" certificate's labels are its sample ("kind": "sample")`
          : `only a "${REGISTERED_METHOD}" certificate's labels are a sample`,
      });
  });

/** A validated certificate. */
export type PolicyCertificate = z.infer<typeof certificateSchema>;
