/**
 * The decision store in memory: the same conditional semantics as the DynamoDB table (create
 * once, lease, status transitions, set-once ledger), so the use cases can be tested without
 * servers. Records are copied in and out, as a real store would serialize them. Not for
 * production: nothing survives the process.
 */
import { type DecisionRecord, type RecordStatus, recordKey } from "../../domain/decision-record.ts";
import {
  type CreateOutcome,
  conditionOf,
  type DecisionFilter,
  type DecisionPage,
  type DecisionSample,
  type DecisionStore,
  type PendingSummary,
  type RecordKey,
  type RecordPage,
  type ReviewWrite,
  type TransitionCondition,
} from "../../domain/decision-store.ts";
import type { ReviewClaim } from "../../domain/review/review.ts";
import { sortKeyOf } from "../dynamodb/decision-index-keys.ts";
import { decodeCursor, encodeCursor } from "../page-cursor.ts";

type Stored = DecisionRecord & { publishLeaseUntil?: number } & Record<string, unknown>;

/** A decision store held in a Map. */
export class InMemoryDecisionStore implements DecisionStore {
  private readonly records = new Map<string, Stored>();
  private readonly failures = new Map<string, { reason: string; at: string }>();
  private readonly failureCounts = new Map<string, number>();

  private static id(key: RecordKey): string {
    const { pk, sk } = recordKey(key.itemId, key.policyId, key.policyVersion);
    return `${pk}|${sk}`;
  }

  private static out(stored: Stored): DecisionRecord {
    const { publishLeaseUntil: _lease, ...record } = structuredClone(stored);
    return record;
  }

  async get(key: RecordKey): Promise<DecisionRecord | undefined> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    return stored ? InMemoryDecisionStore.out(stored) : undefined;
  }

  async latest(itemId: string, policyId: string): Promise<DecisionRecord | undefined> {
    let best: Stored | undefined;
    for (const record of this.records.values()) {
      if (record.itemId !== itemId || record.policyId !== policyId || record.policyVersion < 1) continue;
      if (!best || record.policyVersion > best.policyVersion) best = record;
    }
    return best ? InMemoryDecisionStore.out(best) : undefined;
  }

  async create(record: DecisionRecord, publishLeaseUntil?: number): Promise<CreateOutcome> {
    const id = InMemoryDecisionStore.id(record);
    const existing = this.records.get(id);
    if (existing) return { created: false, record: InMemoryDecisionStore.out(existing) };
    this.records.set(id, {
      ...(structuredClone(record) as Stored),
      ...(publishLeaseUntil === undefined ? {} : { publishLeaseUntil }),
    });
    return { created: true, record: structuredClone(record) };
  }

  async claimPublish(key: RecordKey, leaseMs: number, now = Date.now()): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (!stored || stored.eventPublished) return false;
    if (stored.publishLeaseUntil !== undefined && stored.publishLeaseUntil >= now) return false;
    stored.publishLeaseUntil = now + leaseMs;
    return true;
  }

  async markPublished(key: RecordKey, now = new Date()): Promise<void> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (!stored) return;
    this.update(stored, { eventPublished: true, updatedAt: now.toISOString() });
    delete stored.publishLeaseUntil;
  }

  async transition(
    key: RecordKey,
    from: RecordStatus | TransitionCondition,
    to: RecordStatus,
    fields: Record<string, unknown> = {},
    now = new Date(),
  ): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    const condition = conditionOf(from);
    if (stored?.status !== condition.status) return false;
    if ("chosen" in condition && (stored.chosen !== condition.chosen || stored.route !== condition.route))
      return false;
    this.update(stored, { ...structuredClone(fields), status: to, updatedAt: now.toISOString() });
    return true;
  }

  async setOnce(key: RecordKey, field: string, value: string): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (!stored || stored[field] !== undefined) return false;
    this.update(stored, { [field]: value });
    return true;
  }

  async addToBatch(key: RecordKey, batchId: string): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    const others = (stored?.otherBatchIds as string[] | undefined) ?? [];
    if (!stored || stored.batchId === batchId || others.includes(batchId)) return false;
    this.update(stored, { otherBatchIds: [...others, batchId] });
    return true;
  }

  async pageReviewQueue(query: {
    policyIds: readonly string[];
    limit: number;
    cursor?: string;
    countCap: number;
  }): Promise<RecordPage> {
    const waiting = this.matching(
      (r) => r.status === "pending_review" && query.policyIds.includes(r.policyId),
      InMemoryDecisionStore.queued,
    );
    const page = pageOf(waiting, query, false);
    return {
      records: page.records,
      total: Math.min(waiting.length, query.countCap),
      ...(waiting.length > query.countCap ? { capped: true } : {}),
      ...(page.next ? { next: page.next } : {}),
    };
  }

  async pendingOf(policyId: string, countCap: number): Promise<PendingSummary> {
    const waiting = this.matching(
      (r) => r.status === "pending_review" && r.policyId === policyId,
      InMemoryDecisionStore.queued,
    );
    return {
      count: Math.min(waiting.length, countCap),
      ...(waiting.length > countCap ? { capped: true } : {}),
      ...(waiting[0] ? { oldestCreatedAt: waiting[0].record.queuedAt ?? waiting[0].record.createdAt } : {}),
    };
  }

  async *reviewedSince(policyId: string, since: string): AsyncGenerator<DecisionRecord> {
    const reviewedAt = (r: DecisionRecord) => r.reviewedAt ?? r.updatedAt;
    for (const { record } of this.matching(
      (r) => r.status === "reviewed" && r.policyId === policyId && reviewedAt(r) >= since,
      (r) => `${reviewedAt(r)}|${InMemoryDecisionStore.id(r)}`,
    ))
      yield record;
  }

  async *pendingSince(policyId: string, since: string): AsyncGenerator<DecisionRecord> {
    for (const { record } of this.matching(
      (r) => r.status === "pending_review" && r.policyId === policyId && (r.queuedAt ?? r.createdAt) >= since,
      InMemoryDecisionStore.queued,
    ))
      yield record;
  }

  async pageDecisions(
    filter: DecisionFilter,
    page: { limit: number; cursor?: string },
  ): Promise<DecisionPage> {
    const policies = filter.policyId ? [filter.policyId] : filter.policyIds;
    const admitted = (r: DecisionRecord) =>
      r.createdAt >= filter.since &&
      r.createdAt < filter.until &&
      (!filter.batchId || r.batchId === filter.batchId) &&
      (r.status === "rejected"
        ? !filter.route && (!filter.policyId || r.policyId === filter.policyId)
        : policies.includes(r.policyId) && (!filter.route || r.route === filter.route));
    return pageOf(this.matching(admitted, InMemoryDecisionStore.created).reverse(), page, true);
  }

  async sampleDecisions(sample: DecisionSample): Promise<DecisionRecord[]> {
    const all = this.matching(
      (r) =>
        r.status !== "rejected" &&
        r.policyId === sample.policyId &&
        r.policyVersion === sample.policyVersion &&
        r.createdAt >= sample.since &&
        r.createdAt < sample.until,
      InMemoryDecisionStore.created,
    );
    // Evenly spaced through the window's records when there are more than the sample holds.
    const step = Math.max(1, all.length / sample.size);
    return Array.from(
      { length: Math.min(all.length, sample.size) },
      (_, i) => all[Math.floor(i * step)]!.record,
    );
  }

  async writeReview(key: RecordKey, write: ReviewWrite, now = new Date()): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (stored?.status !== write.from || (stored.reviewVersion ?? 0) !== write.reviewVersion) return false;
    for (const field of write.remove ?? []) delete (stored as Record<string, unknown>)[field];
    this.update(stored, {
      ...structuredClone(write.set),
      status: write.to,
      updatedAt: now.toISOString(),
      reviewVersion: write.reviewVersion + 1,
      ...(write.entry
        ? { reviewHistory: [...(stored.reviewHistory ?? []), structuredClone(write.entry)] }
        : {}),
    });
    return true;
  }

  async claimReview(
    key: RecordKey,
    claim: ReviewClaim,
    now: number,
    options: { readonly takeOver?: boolean } = {},
  ): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (stored?.status !== "pending_review") return false;
    const held = stored.claim;
    if (!options.takeOver && held && held.until >= now && held.reviewerId !== claim.reviewerId) return false;
    this.update(stored, { claim: { ...claim } });
    return true;
  }

  async noteFailure(messageId: string, reason: string, now = new Date()): Promise<number> {
    const failures = (this.failureCounts.get(messageId) ?? 0) + 1;
    this.failureCounts.set(messageId, failures);
    this.failures.set(messageId, { reason: reason.slice(0, 1000), at: now.toISOString() });
    return failures;
  }

  async failureOf(messageId: string): Promise<{ reason: string; at: string } | undefined> {
    const failure = this.failures.get(messageId);
    return failure ? { ...failure } : undefined;
  }

  private update(stored: Stored, fields: Record<string, unknown>): void {
    Object.assign(stored as Record<string, unknown>, fields);
  }

  /** The sort key of a record in the time-ordered lists, as the DynamoDB store orders them. */
  private static created(record: DecisionRecord): string {
    return sortKeyOf(record.createdAt, recordKey(record.itemId, record.policyId, record.policyVersion));
  }

  /** The sort key of a record in the review queue: when it joined it, as the DynamoDB store lists it. */
  private static queued(record: DecisionRecord): string {
    const key = recordKey(record.itemId, record.policyId, record.policyVersion);
    return sortKeyOf(record.queuedAt ?? record.createdAt, key);
  }

  /** The records that pass, with their sort keys, in sort-key order. */
  private matching(
    admits: (record: DecisionRecord) => boolean,
    sortKey: (record: DecisionRecord) => string,
  ): { key: string; record: DecisionRecord }[] {
    return [...this.records.values()]
      .filter(admits)
      .map((record) => ({ key: sortKey(record), record: InMemoryDecisionStore.out(record) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}

/** One page of sorted entries after a cursor (descending lists are already reversed). */
function pageOf(
  entries: readonly { key: string; record: DecisionRecord }[],
  page: { limit: number; cursor?: string },
  descending: boolean,
): { records: DecisionRecord[]; next?: string } {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  const start =
    after === undefined ? 0 : entries.findIndex((e) => (descending ? e.key < after : e.key > after));
  const rest = start < 0 ? [] : entries.slice(start);
  const shown = rest.slice(0, page.limit);
  return {
    records: shown.map((e) => e.record),
    ...(rest.length > shown.length ? { next: encodeCursor(shown.at(-1)!.key) } : {}),
  };
}
