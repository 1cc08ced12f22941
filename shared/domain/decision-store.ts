/**
 * The decision store port: what the pipeline needs from the decisions table, as an interface with
 * two implementations that pass one contract suite (`test/helpers/decision-store.contract.ts`):
 * DynamoDB (`shared/adapters/dynamodb/dynamodb-decision-store.ts`, the real path) and in memory
 * (`shared/adapters/in-memory/in-memory-decision-store.ts`, for tests of the use cases without servers).
 */
import type { DecisionRecord, RecordStatus } from "./decision-record.ts";
import type { ReviewClaim, ReviewEntry } from "./review/review.ts";
import type { Route } from "./routing.ts";
import { TABLE_INDEXES } from "./topology.ts";

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

/** One page of the review queue, oldest first. */
export interface RecordPage {
  readonly records: DecisionRecord[];
  /** Opaque cursor of the next page, when there is one. */
  readonly next?: string;
  /** How many items wait in all, counted up to the cap the caller gave. */
  readonly total: number;
  /** True when the count stopped at its cap: at least `total` wait. */
  readonly capped?: boolean;
}

/** A policy's review backlog, read with bounded queries. */
export interface PendingSummary {
  /** Items waiting, counted up to the cap the caller gave. */
  readonly count: number;
  /** True when the count stopped at its cap. */
  readonly capped?: boolean;
  /** When the oldest waiting item was decided (ISO time); absent when none waits. */
  readonly oldestCreatedAt?: string;
}

/** Which decisions {@link DecisionStore.pageDecisions} lists: a time window, filtered in the query. */
export interface DecisionFilter {
  /** Created at or after (ISO time). */
  readonly since: string;
  /** Created before (ISO time). */
  readonly until: string;
  /** Only this policy's decisions (and its rejected items). */
  readonly policyId?: string;
  /**
   * The policies an unfiltered list reads (the registry's ids); with no `policyId`, every rejected
   * item is listed too, an unknown policy's included.
   */
  readonly policyIds: readonly string[];
  /** Only decisions routed so (rejected items have no route, so none of them). */
  readonly route?: Route;
  readonly batchId?: string;
}

/** One page of decisions, newest first. */
export interface DecisionPage {
  readonly records: DecisionRecord[];
  /** Opaque cursor of the next page, when there may be one. */
  readonly next?: string;
}

/** What {@link DecisionStore.sampleDecisions} samples. */
export interface DecisionSample {
  readonly policyId: string;
  readonly policyVersion: number;
  /** The window: created at or after `since`, before `until` (ISO times). */
  readonly since: string;
  readonly until: string;
  /** Most records returned; every one of the window when it holds no more. */
  readonly size: number;
  /** Equal parts of the window the sample is spread over. */
  readonly slices: number;
}

/** The state a record must be in for a transition: its status, and the decision it holds. */
export interface TransitionCondition {
  readonly status: RecordStatus;
  readonly chosen: string;
  readonly route: Route;
}

/** The status a transition starts from, and the decision fields it requires. */
export function conditionOf(
  from: RecordStatus | TransitionCondition,
): TransitionCondition | { status: RecordStatus } {
  return typeof from === "string" ? { status: from } : from;
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
   * `from` (already moved: the caller's retry or a duplicate). `from` may also name the choice and
   * route the record must hold, so that an effect applies only the decision the record made.
   */
  transition(
    key: RecordKey,
    from: RecordStatus | TransitionCondition,
    to: RecordStatus,
    fields?: Record<string, unknown>,
    now?: Date,
  ): Promise<boolean>;
  /**
   * Sets `field` to `value` unless the field is already set: the at-most-once ledger of a target
   * keyed by event id. True when this call set it; false when it was set (a duplicate event).
   */
  setOnce(key: RecordKey, field: string, value: string): Promise<boolean>;
  /**
   * Notes that the item is also a member of batch `batchId` (an item submitted in more than one
   * batch has one decision): its review is then counted in each. False when the record already
   * names it, or there is no record.
   */
  addToBatch(key: RecordKey, batchId: string): Promise<boolean>;
  /**
   * One page of the items waiting for review under `policyIds`, oldest first, from `cursor` (a
   * previous page's `next`), with how many wait, counted up to `countCap`. A foreign cursor is a
   * RangeError.
   */
  pageReviewQueue(query: {
    policyIds: readonly string[];
    limit: number;
    cursor?: string;
    countCap: number;
  }): Promise<RecordPage>;
  /** How many of a policy's items wait for review (counted up to `countCap`), and the oldest one's time. */
  pendingOf(policyId: string, countCap: number): Promise<PendingSummary>;
  /**
   * The reviewed records of a policy (any version) whose label was given at or after `since` (ISO
   * time), read a page at a time, in no particular order: what calibration and audits read.
   */
  reviewedSince(policyId: string, since: string): AsyncIterable<DecisionRecord>;
  /**
   * The records of a policy (any version) waiting for review that were decided at or after
   * `since` (ISO time), read a page at a time, in no particular order: the audit samples not yet
   * labelled, which the audit estimate counts as drawn.
   */
  pendingSince(policyId: string, since: string): AsyncIterable<DecisionRecord>;
  /** One page of decisions, newest first, from `cursor` (a previous page's `next`). */
  pageDecisions(filter: DecisionFilter, page: { limit: number; cursor?: string }): Promise<DecisionPage>;
  /**
   * Decided records of a policy version in a window, at most `size`, spread over the window's
   * slices (all of them when the window holds no more): reads never grow with the traffic.
   */
  sampleDecisions(sample: DecisionSample): Promise<DecisionRecord[]>;
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

/**
 * Every decision the filter admits, newest first, a page at a time (memory stays at one page):
 * for operator tools that must see them all (`decide status`, the local mode's summary).
 */
export async function* everyDecision(
  store: DecisionStore,
  filter: DecisionFilter,
): AsyncGenerator<DecisionRecord> {
  let cursor: string | undefined;
  do {
    const page = await store.pageDecisions(filter, {
      limit: TABLE_INDEXES.batchGetKeys,
      ...(cursor ? { cursor } : {}),
    });
    yield* page.records;
    cursor = page.next;
  } while (cursor);
}

/** The widest window: every decision up to `now`. */
export function allTime(now: Date): { since: string; until: string } {
  return { since: "1970-01-01T00:00:00.000Z", until: new Date(now.getTime() + 1).toISOString() };
}
