/**
 * The pipeline's events as zod schemas: what upstream systems send ("Decision Requested": the
 * item) and what the pipeline publishes. The target functions parse what they receive with them
 * (through Powertools Parser's EventBridge envelope), and `npm run schemas` writes them out as
 * JSON Schemas (`events/schemas/`) that the CDK app registers in an EventBridge schema registry,
 * so the contracts published to upstream teams are generated, never hand-copied.
 */
import { z } from "zod";
import { DetailType, type PipelineEvent, pipelineEvent } from "../events.ts";
import { itemSchema } from "../item.ts";

const eventId = z.string().regex(/^[0-9a-f]{32}$/, "must be the event's 32-hex-digit id");
const probability = z.number().min(0).max(1);

/** "Decision Made": one decided item, routed `auto` or `human`. */
export const decisionMadeSchema = z.object({
  eventId,
  itemId: z.string(),
  policyId: z.string(),
  policyVersion: z.number().int().min(1),
  route: z.enum(["auto", "human"]),
  reason: z.string(),
  chosen: z.string(),
  topProbability: probability,
  confidence: probability,
  distribution: z.record(z.string(), probability),
  modelSha256: z.string(),
  promptSha256: z.string(),
  decidedAt: z.string(),
  /**
   * Under a policy with a cascade: which of its models answered (1 for the first); the one that
   * acted when the route is auto, the last one asked when people got the item.
   */
  tier: z
    .object({
      index: z.number().int().min(1),
      /** The model's name as the policy names it; absent for the endpoint's own model. */
      model: z.string().optional(),
    })
    .optional(),
  supersedes: z
    .object({
      policyVersion: z.number().int(),
      route: z.enum(["auto", "human"]),
      chosen: z.string().optional(),
    })
    .optional(),
});
export type DecisionMade = z.infer<typeof decisionMadeSchema>;

/** "Decision Rejected": an item that cannot be decided, with every problem named. */
export const decisionRejectedSchema = z.object({
  eventId,
  itemId: z.string(),
  policyId: z.string(),
  problems: z.array(z.object({ field: z.string(), message: z.string() })),
  rejectedAt: z.string(),
});

/** "Decision Reviewed": a reviewer's label for an escalated item. */
export const decisionReviewedSchema = z.object({
  eventId,
  itemId: z.string(),
  policyId: z.string(),
  policyVersion: z.number().int(),
  label: z.string(),
  chosen: z.string().optional(),
  agreed: z.boolean(),
  reviewer: z.string(),
  /** The reviewer's stable id (the token's subject); absent on events from before sign-in. */
  reviewerId: z.string().optional(),
  reviewedAt: z.string(),
});

/** "Decision Review Revised": a stored label changed or undone (the item then waits again). */
export const decisionReviewRevisedSchema = z.object({
  eventId,
  itemId: z.string(),
  policyId: z.string(),
  policyVersion: z.number().int(),
  action: z.enum(["change", "undo"]),
  previousLabel: z.string(),
  /** The new label; null after an undo. */
  label: z.string().nullable(),
  reviewer: z.string(),
  reviewerId: z.string(),
  revisedAt: z.string(),
});

/** "Item Actioned": a confident decision applied by the auto-action target. */
export const itemActionedSchema = z.object({
  eventId,
  itemId: z.string(),
  policyId: z.string(),
  policyVersion: z.number().int(),
  action: z.string(),
  causedBy: eventId,
});

/** "Calibration Drift": recent decisions of a policy version no longer look like its calibration. */
export const calibrationDriftSchema = z.object({
  eventId,
  policyId: z.string(),
  policyVersion: z.number().int(),
  /** The window checked, when the daily drift job ran it (absent from `decide calibrate --check`). */
  periodHours: z.number().optional(),
  decisions: z.number().int(),
  checks: z.array(
    z.object({
      name: z.enum(["mean_confidence", "escalation_rate", "option_mix", "allowed_token_mass"]),
      baseline: z.number(),
      recent: z.number(),
      bound: z.number(),
      drifted: z.boolean(),
    }),
  ),
});

/** "Calibration Proposed": a next policy version fitted on reviewers' labels, waiting to be applied. */
export const calibrationProposedSchema = z.object({
  eventId,
  policyId: z.string(),
  policyVersion: z.number().int(),
  proposedVersion: z.number().int(),
  labels: z.number().int(),
  /** ECE as the version stands ("raw") and proposed (out of fold). */
  ece: z.object({ raw: z.number(), calibrated: z.number() }),
  temperature: z.object({ current: z.number(), proposed: z.number() }),
  autoThreshold: z.object({ current: z.number(), proposed: z.number() }),
  /** Share of the labelled items the proposed threshold would automate. */
  automatedShare: z.number(),
  automatedAccuracy: z.number().nullable(),
  /** The calibration verdict first, then the threshold's notes. */
  notes: z.array(z.string()),
  /** With `--max-auto-error`: the certified rate and threshold (null: none qualified). */
  certificate: z
    .object({
      maxError: z.number(),
      confidence: z.number(),
      threshold: z.number().nullable(),
      bound: z.number().nullable(),
    })
    .optional(),
  /** Object keys of the proposed policy, its report and its summary. */
  location: z.object({ policy: z.string(), report: z.string(), summary: z.string() }),
  proposedAt: z.string(),
});

const batchCounts = z.object({
  lines: z.number().int(),
  accepted: z.number().int(),
  rejected: z.number().int(),
  decided: z.number().int(),
  auto: z.number().int(),
  human: z.number().int(),
  failed: z.number().int(),
  deadLettered: z.number().int(),
  reviewed: z.number().int(),
});

/** "Batch Completed": every accepted item of a batch reached a terminal state; the files are written. */
export const batchCompletedSchema = z.object({
  eventId,
  batchId: z.string(),
  policyId: z.string(),
  source: z.string(),
  counts: batchCounts,
  /** Object keys of the results file and the errors file. */
  results: z.string(),
  errors: z.string(),
  completedAt: z.string(),
});

/** "Batch Reviewed": every escalated item of a completed batch has its label; the results file has them. */
export const batchReviewedSchema = z.object({
  eventId,
  batchId: z.string(),
  policyId: z.string(),
  counts: batchCounts,
  results: z.string(),
  reviewedAt: z.string(),
});

/** Every event's detail schema by detail type. */
export const EVENT_DETAIL_SCHEMAS = {
  [DetailType.requested]: itemSchema,
  [DetailType.made]: decisionMadeSchema,
  [DetailType.rejected]: decisionRejectedSchema,
  [DetailType.reviewed]: decisionReviewedSchema,
  [DetailType.revised]: decisionReviewRevisedSchema,
  [DetailType.actioned]: itemActionedSchema,
  [DetailType.drift]: calibrationDriftSchema,
  [DetailType.calibrationProposed]: calibrationProposedSchema,
  [DetailType.batchCompleted]: batchCompletedSchema,
  [DetailType.batchReviewed]: batchReviewedSchema,
} as const;

/** An event type the pipeline publishes (every detail type but the upstream "Decision Requested"). */
export type PublishedType = Exclude<keyof typeof EVENT_DETAIL_SCHEMAS, typeof DetailType.requested>;

/** The detail of a published event as its schema defines it, without the `eventId` the builder adds. */
export type EventDetail<T extends PublishedType> = Omit<z.input<(typeof EVENT_DETAIL_SCHEMAS)[T]>, "eventId">;

/**
 * The one builder of the pipeline's events: the detail is checked against its schema's type at
 * compile time, and the stable `eventId` is derived from `eventKey` (the same facts, the same id).
 */
export function publishedEvent<T extends PublishedType>(
  detailType: T,
  eventKey: string,
  detail: EventDetail<T>,
): PipelineEvent {
  return pipelineEvent(detailType, eventKey, detail as Record<string, unknown>);
}
