/**
 * The decision store in memory: the same conditional semantics as the DynamoDB table (create
 * once, lease, status transitions, set-once ledger), so the use cases can be tested without
 * servers. Records are copied in and out, as a real store would serialize them. Not for
 * production: nothing survives the process.
 */
import { type DecisionRecord, type RecordStatus, recordKey } from "../domain/decision-record.ts";
import type {
  CreateOutcome,
  DecisionStore,
  RecordKey,
  RecordPage,
  ReviewWrite,
} from "../domain/decision-store.ts";
import type { ReviewClaim } from "../domain/review.ts";

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
    from: RecordStatus,
    to: RecordStatus,
    fields: Record<string, unknown> = {},
    now = new Date(),
  ): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (stored?.status !== from) return false;
    this.update(stored, { ...structuredClone(fields), status: to, updatedAt: now.toISOString() });
    return true;
  }

  async setOnce(key: RecordKey, field: string, value: string): Promise<boolean> {
    const stored = this.records.get(InMemoryDecisionStore.id(key));
    if (!stored || stored[field] !== undefined) return false;
    this.update(stored, { [field]: value });
    return true;
  }

  async listSince(status: RecordStatus, since: string): Promise<DecisionRecord[]> {
    return this.sorted(status).filter((record) => record.createdAt >= since);
  }

  async listByStatus(status: RecordStatus, limit = 50): Promise<DecisionRecord[]> {
    return this.sorted(status).slice(0, limit);
  }

  async pageByStatus(status: RecordStatus, options: { limit: number; cursor?: string }): Promise<RecordPage> {
    const all = this.sorted(status);
    const start = options.cursor === undefined ? 0 : Number(options.cursor);
    if (!Number.isInteger(start) || start < 0)
      throw new RangeError(`cursor: "${options.cursor}" is not a page cursor of this list`);
    const end = start + options.limit;
    return {
      records: all.slice(start, end),
      total: all.length,
      ...(end < all.length ? { next: String(end) } : {}),
    };
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

  private sorted(status: RecordStatus): DecisionRecord[] {
    return [...this.records.values()]
      .filter((record) => record.status === status)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map(InMemoryDecisionStore.out);
  }
}
