/**
 * The decision store port: what the pipeline needs from the decisions table, as an interface with
 * two implementations that pass one contract suite (`test/unit/decision-store.contract.ts`):
 * DynamoDB (`shared/adapters/dynamodb-decision-store.ts`, the real path) and in memory
 * (`shared/adapters/in-memory-decision-store.ts`, for tests of the use cases without servers).
 */
import type { DecisionRecord, RecordStatus } from "./decision-record.ts";
import type { ReviewClaim, ReviewEntry } from "./review.ts";

/** A record's key: item, policy and policy version. */
export type RecordKey = Pick<DecisionRecord, "itemId" | "policyId" | "policyVersion">;

/** The outcome of {@link DecisionStore.create}. */
export interface CreateOutcome {
  /** False when a record already existed (a duplicate or a race lost): `record` is that one. */
  readonly created: boolean;
  readonly record: DecisionRecord;
}

/**
 * A review write, applied only when the record is still in `from` at `reviewVersion` (0: never
 * written by a review): the optimistic guard that makes two reviewers' writes exclusive.
 */
export interface ReviewWrite {
  readonly from: RecordStatus;
  readonly to: RecordStatus;
  readonly reviewVersion: number;
  /** Fields to set (besides status, updatedAt and the bumped reviewVersion). */
  readonly set: Record<string, unknown>;
  /** Fields to remove. */
  readonly remove?: readonly string[];
  /** Appended to `reviewHistory`. */
  readonly entry?: ReviewEntry;
}

/** One page of records in a status, oldest first. */
export interface RecordPage {
  readonly records: DecisionRecord[];
  /** Opaque cursor of the next page, when there is one. */
  readonly next?: string;
  /** How many records are in the status in all. */
  readonly total: number;
}

/** Reads and writes decision records. */
export interface DecisionStore {
  /** The record for an item and policy version, read consistently. */
  get(key: RecordKey): Promise<DecisionRecord | undefined>;
  /** The record of the highest policy version (at least 1) for an item and policy, if any. */
  latest(itemId: string, policyId: string): Promise<DecisionRecord | undefined>;
  /**
   * Writes the record unless one exists for the same key. A record the store cannot hold throws
   * {@link StoreRejectedError}: retrying cannot help. With `publishLeaseUntil` (epoch ms) the new
   * record is written holding the publish lease, so its writer may publish without a separate
   * claim (one round trip fewer); a crash before publishing leaves the lease to expire.
   */
  create(record: DecisionRecord, publishLeaseUntil?: number): Promise<CreateOutcome>;
  /**
   * Claims the right to publish the record's event for `leaseMs`. Only one worker holds it at a
   * time; a claim left by a crashed worker expires, so redelivery can repair the outbox.
   */
  claimPublish(key: RecordKey, leaseMs: number, now?: number): Promise<boolean>;
  /** Records that the event went out. */
  markPublished(key: RecordKey, now?: Date): Promise<void>;
  /**
   * Moves a record from one status to another, with extra fields; false when it was not in
   * `from` (already moved: the caller's retry or a duplicate).
   */
  transition(
    key: RecordKey,
    from: RecordStatus,
    to: RecordStatus,
    fields?: Record<string, unknown>,
    now?: Date,
  ): Promise<boolean>;
  /**
   * Sets `field` to `value` unless the field is already set: the at-most-once ledger of a target
   * keyed by event id. True when this call set it; false when it was set (a duplicate event).
   */
  setOnce(key: RecordKey, field: string, value: string): Promise<boolean>;
  /** Every record in `status` created at or after `since` (ISO time), across pages. */
  listSince(status: RecordStatus, since: string): Promise<DecisionRecord[]>;
  /** Records in `status`, oldest first (the review queue for `pending_review`). */
  listByStatus(status: RecordStatus, limit?: number): Promise<DecisionRecord[]>;
  /** One page of records in `status`, oldest first, from `cursor` (a previous page's `next`). */
  pageByStatus(status: RecordStatus, options: { limit: number; cursor?: string }): Promise<RecordPage>;
  /** Applies a review write; false when the guard failed (someone else wrote first). */
  writeReview(key: RecordKey, write: ReviewWrite, now?: Date): Promise<boolean>;
  /**
   * Claims a pending item for `claim.reviewerId` until `claim.until`; false when the item is not
   * pending or another reviewer holds a claim that has not expired at `now` (epoch ms), unless
   * `takeOver` (an admin taking the item over) replaces that claim.
   */
  claimReview(
    key: RecordKey,
    claim: ReviewClaim,
    now: number,
    options?: { readonly takeOver?: boolean },
  ): Promise<boolean>;
  /**
   * Notes why a message failed, keyed by its SQS message id (replay filters on it), and returns
   * how many failures are noted for it so far (the decide function dead-letters at its limit).
   */
  noteFailure(messageId: string, reason: string, now?: Date): Promise<number>;
  /** The last failure noted for a message, if any. */
  failureOf(messageId: string): Promise<{ reason: string; at: string } | undefined>;
}
