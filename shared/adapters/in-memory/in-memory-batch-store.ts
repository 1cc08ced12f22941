/**
 * The batch store in memory, for the use cases' tests without servers; it passes the same
 * contract suite as the DynamoDB one (`test/helpers/batch-store.contract.ts`).
 */
import {
  type BatchCounts,
  type BatchMember,
  type BatchRecord,
  type BatchStore,
  countDelta,
  type MemberState,
  mayMove,
} from "../../domain/batch.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";

/** Batches and members in maps; every method copies, so callers never share state with it. */
export class InMemoryBatchStore implements BatchStore {
  private readonly batches = new Map<string, BatchRecord>();
  private readonly memberMaps = new Map<string, Map<string, BatchMember>>();

  async createBatch(batch: BatchRecord): Promise<boolean> {
    if (this.batches.has(batch.batchId)) return false;
    this.batches.set(batch.batchId, structuredClone(batch));
    this.memberMaps.set(batch.batchId, new Map());
    return true;
  }

  async getBatch(batchId: string): Promise<BatchRecord | undefined> {
    const batch = this.batches.get(batchId);
    return batch ? structuredClone(batch) : undefined;
  }

  async listBatches(limit: number): Promise<BatchRecord[]> {
    return [...this.batches.values()]
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0))
      .slice(0, limit)
      .map((b) => structuredClone(b));
  }

  async finishIntake(
    batchId: string,
    counts: Pick<BatchCounts, "lines" | "accepted" | "rejected">,
    now: Date,
  ): Promise<BatchRecord> {
    const batch = this.require(batchId);
    const next = {
      ...batch,
      status: "running" as const,
      submittedAt: now.toISOString(),
      counts: { ...batch.counts, ...counts },
    };
    this.batches.set(batchId, next);
    return structuredClone(next);
  }

  async recordMember(batchId: string, member: BatchMember): Promise<BatchRecord | undefined> {
    const batch = this.require(batchId);
    const members = this.memberMaps.get(batchId)!;
    const previous = members.get(member.itemId)?.state;
    if (!mayMove(previous, member.state)) return undefined;
    members.set(member.itemId, structuredClone(member));
    const counts = { ...batch.counts } as Record<keyof BatchCounts, number>;
    for (const [key, by] of Object.entries(countDelta(previous, member.state)))
      counts[key as keyof BatchCounts] += by!;
    this.batches.set(batchId, { ...batch, counts });
    return this.getBatch(batchId);
  }

  async recordLabel(batchId: string, itemId: string, label: string): Promise<BatchRecord | undefined> {
    const batch = this.require(batchId);
    const member = this.memberMaps.get(batchId)!.get(itemId);
    if (member?.state !== "human" || member.label !== undefined) return undefined;
    this.memberMaps.get(batchId)!.set(itemId, { ...member, label });
    this.batches.set(batchId, { ...batch, counts: { ...batch.counts, reviewed: batch.counts.reviewed + 1 } });
    return this.getBatch(batchId);
  }

  async reviseLabel(
    batchId: string,
    itemId: string,
    label: string | undefined,
  ): Promise<BatchRecord | undefined> {
    const batch = this.require(batchId);
    const members = this.memberMaps.get(batchId)!;
    const member = members.get(itemId);
    if (member?.label === undefined) return undefined;
    const { label: _old, ...rest } = member;
    members.set(itemId, label === undefined ? rest : { ...rest, label });
    if (label === undefined)
      this.batches.set(batchId, {
        ...batch,
        counts: { ...batch.counts, reviewed: batch.counts.reviewed - 1 },
      });
    return this.getBatch(batchId);
  }

  async *memberPages(batchId: string, only?: readonly MemberState[]): AsyncGenerator<BatchMember[]> {
    const members = this.memberMaps.get(batchId) ?? new Map<string, BatchMember>();
    // The ids once, sorted; the members themselves are copied a page at a time.
    const ids = [...members.keys()].sort();
    for (let i = 0; i < ids.length; i += TABLE_INDEXES.scanPage) {
      const page = ids
        .slice(i, i + TABLE_INDEXES.scanPage)
        .map((id) => members.get(id)!)
        .filter((m) => !only || only.includes(m.state))
        .map((m) => structuredClone(m));
      if (page.length > 0) yield page;
    }
  }

  private readonly lines = new Map<string, number>();

  async claimLine(batchId: string, itemId: string, line: number): Promise<number> {
    const key = `${batchId}|${itemId}`;
    const held = this.lines.get(key);
    if (held !== undefined) return held;
    this.lines.set(key, line);
    return line;
  }

  async markFilesStale(batchId: string, now: Date): Promise<boolean> {
    const batch = this.require(batchId);
    this.batches.set(batchId, {
      ...batch,
      filesVersion: (batch.filesVersion ?? 0) + 1,
      filesStaleSince: batch.filesStaleSince ?? now.toISOString(),
    });
    return batch.filesStaleSince === undefined;
  }

  async markFilesCurrent(batchId: string, version: number): Promise<boolean> {
    const { filesStaleSince: _stale, ...batch } = this.require(batchId);
    if ((batch.filesVersion ?? 0) !== version) return false;
    this.batches.set(batchId, batch);
    return true;
  }

  private readonly claims = new Map<string, number>();

  async claimAnnouncement(
    batchId: string,
    phase: "completed" | "reviewed",
    now: number,
    until: number,
  ): Promise<boolean> {
    const batch = this.require(batchId);
    const done = phase === "completed" ? batch.completedEventPublished : batch.reviewedEventPublished;
    const key = `${batchId}|${phase}`;
    if (done || (this.claims.get(key) ?? 0) > now) return false;
    this.claims.set(key, until);
    return true;
  }

  async updateBatch(
    batchId: string,
    fields: Partial<Omit<BatchRecord, "batchId" | "counts">>,
  ): Promise<void> {
    this.batches.set(batchId, { ...this.require(batchId), ...structuredClone(fields) });
  }

  private require(batchId: string): BatchRecord {
    const batch = this.batches.get(batchId);
    if (!batch) throw new RangeError(`no batch ${batchId}`);
    return batch;
  }
}
