/**
 * The decision record kept in DynamoDB: one per item and policy version, written once.
 */
import type { CertificationDraw } from "./calibration/certificate/certification-sample.ts";
import type { RescoredAnswer, TierAnswer } from "./cascade.ts";
import type { ReviewClaim, ReviewEntry } from "./review/review.ts";
import type { GoldMark } from "./review/review-gold.ts";
import type { Route, RouteReason } from "./routing.ts";
import type { ShadowScore } from "./shadow.ts";

/** Where a record is in its life. */
export const RECORD_STATUSES = [
  "rejected",
  "pending_review",
  "auto_approved",
  "actioned",
  "reviewed",
] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

/** A decided (or rejected) item. */
export interface DecisionRecord {
  readonly itemId: string;
  readonly policyId: string;
  /** 0 for items rejected before a policy could be resolved. */
  readonly policyVersion: number;
  readonly status: RecordStatus;
  readonly route?: Route;
  readonly reason?: RouteReason;
  readonly chosen?: string;
  /** Calibrated probabilities by option id, in the policy's option order. */
  readonly distribution?: Record<string, number>;
  readonly rawLogits?: number[];
  readonly topProbability?: number;
  /** Conformal prediction set (option ids), when the policy defines one. */
  readonly predictionSet?: string[];
  readonly confidence?: number;
  readonly allowedTokenMass?: number | null;
  readonly temperature?: number;
  readonly modelSha256?: string;
  readonly promptSha256?: string;
  readonly promptVersion?: string;
  /** Why the policy's certificate did not hold for this decision ("certificate stale: model changed"). */
  readonly certificateProblem?: string;
  /** "cyclic" when the distribution averages the rotations of the options (policy optionOrder). */
  readonly optionOrder?: "declared" | "cyclic";
  readonly latencyMs?: number;
  /**
   * For a decision that passed every other rule (automated, or drawn for audit): its audit band
   * and the chance that decisions of the band were drawn; the audit estimate weights by its inverse.
   */
  readonly auditBand?: string;
  readonly auditInclusionProbability?: number;
  /**
   * A certification sample drew this decision for a label (`decide calibrate --plan --request`):
   * the frame it was drawn from, its band and its chance, so a certificate can weight its label.
   */
  readonly certification?: CertificationDraw;
  /**
   * When the item joined the review queue, where that is not when it was decided (a
   * certification sample): the queue orders it, and ages it, by this.
   */
  readonly queuedAt?: string;
  /**
   * Near-duplicates share a group and count once in a certificate (set by a reviewer; else the
   * item's `metadata.group`, else the item alone).
   */
  readonly group?: string;
  /**
   * Under a policy with a cascade: every tier's answer, in the order the tiers were asked (its
   * model, hashes, distribution and logits). The record's own fields are the last one's: the
   * tier that acted, or the last to pass the item to people.
   */
  readonly tiers?: readonly TierAnswer[];
  /**
   * A cascade's later tiers asked after the decision (`decide calibrate --rescore`), for a
   * labelled or drawn item that lacks their answer: what the certificate reads where `tiers` has
   * none. Never acted on; each says it is a re-score, of which tier, and when.
   */
  readonly rescores?: readonly RescoredAnswer[];
  /** The shadow candidate's answer, when the item was in the shadow sample (never acted on). */
  readonly shadow?: ShadowScore;
  /** The item's state, kept for reviewers. */
  readonly state?: unknown;
  readonly metadata?: Record<string, unknown>;
  /** The batch the item came in, when it came in one. */
  readonly batchId?: string;
  /** The other batches the item was submitted in (one decision, counted in each). */
  readonly otherBatchIds?: readonly string[];
  /** Why the item was rejected. */
  readonly problems?: { field: string; message: string }[];
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The earlier decision this one replaces (an item sent again with `"redecide": true`). */
  readonly supersedes?: { policyVersion: number; route: Route; chosen?: string };
  /** Whether the outcome event went out (the outbox flag). */
  readonly eventPublished: boolean;
  /** The latest label (calibration reads this); absent until reviewed or after an undo. */
  readonly label?: string;
  /** Display name and id of whoever gave the latest label. */
  readonly reviewer?: string;
  readonly reviewerId?: string;
  readonly reviewedAt?: string;
  /** Every label, change and undo, oldest first. */
  readonly reviewHistory?: ReviewEntry[];
  /** Bumped by every review write: the optimistic-concurrency guard of the review use case. */
  readonly reviewVersion?: number;
  /** The reviewer working on the item now, until the claim expires. */
  readonly claim?: ReviewClaim;
  /** An audit sample that needs two reviewers: the first one's label while the second is awaited. */
  readonly firstReview?: { label: string; reviewerId: string; reviewerName: string; at: string };
  /**
   * A gold item (`decide review gold`): its known answer and each reviewer's answer, shown only
   * to admins; its labels never count as the model's evidence.
   */
  readonly gold?: GoldMark;
  /** Two reviewers of an audit sample disagreed: an admin gives the final label. */
  readonly disputed?: boolean;
  /** The latest change or undo, and whether its "Decision Review Revised" event went out. */
  readonly lastRevision?: ReviewEntry;
  readonly revisionEventPublished?: boolean;
  /** Whether "Decision Reviewed" went out for the stored label. */
  readonly reviewEventPublished?: boolean;
  /** The action applied by the auto-action target, and whether "Item Actioned" went out. */
  readonly action?: string;
  /** The "Decision Made" event whose arrival applied the action (the auto-action target's ledger). */
  readonly actionEventId?: string;
  readonly actionEventPublished?: boolean;
  /** The "Decision Made" event that queued the item for review (the review intake's ledger). */
  readonly reviewQueuedBy?: string;
}

/** The record's key: item and policy version. */
export function recordKey(
  itemId: string,
  policyId: string,
  policyVersion: number,
): { pk: string; sk: string } {
  return { pk: `ITEM#${itemId}`, sk: `POLICY#${policyId}#V${String(policyVersion).padStart(6, "0")}` };
}

/** Every batch the record's item was submitted in: the first, then the others, each once. */
export function batchesOf(record: Pick<DecisionRecord, "batchId" | "otherBatchIds">): string[] {
  return [...new Set([...(record.batchId ? [record.batchId] : []), ...(record.otherBatchIds ?? [])])];
}

/**
 * The record's field `name`, which its status guarantees (a decided record has a route, a
 * reviewed one a label): a record without it breaks an invariant, and no event is made of it.
 */
export function fieldOf<K extends keyof DecisionRecord>(
  record: DecisionRecord,
  name: K,
): NonNullable<DecisionRecord[K]> {
  const value = record[name];
  if (value === undefined || value === null)
    throw new RangeError(`${record.itemId}: a ${record.status} record without ${String(name)}`);
  return value as NonNullable<DecisionRecord[K]>;
}
