/**
 * One contract suite for every BatchStore (DynamoDB on DynamoDB Local, and in memory): a batch is
 * created once; intake's counts are set, not added, so a rerun does not double them; a member is
 * counted once however often (or however concurrently) it is recorded; a dead letter decided
 * later moves to decided; a label is counted once; members list in item order; recent batches
 * come newest first; and a member never shows up in the review queue.
 */
import { describe, expect, it } from "vitest";
import { type BatchMember, type BatchRecord, type BatchStore, NO_COUNTS } from "../../shared/domain/batch.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";

let counter = 0;
/** A new batch with a unique id. */
export function newBatch(overrides: Partial<BatchRecord> = {}): BatchRecord {
  counter++;
  return {
    batchId: `b-contract-${Date.now()}-${counter}`,
    policyId: "content-moderation",
    source: "incoming/content-moderation/posts.jsonl",
    status: "submitting",
    counts: NO_COUNTS,
    createdAt: new Date(Date.UTC(2026, 10, 30, 0, 0, counter)).toISOString(),
    ...overrides,
  };
}

const member = (
  itemId: string,
  state: BatchMember["state"],
  extra: Partial<BatchMember> = {},
): BatchMember => ({
  itemId,
  policyId: "content-moderation",
  policyVersion: 1,
  state,
  ...(state === "auto" || state === "human"
    ? {
        route: state,
        chosen: "allow",
        distribution: { remove: 0.1, allow: 0.9 },
        reason: "confident",
        status: "pending_review",
      }
    : { problem: "refused" }),
  ...extra,
});

/** Runs the contract against stores from `make` (a fresh pair per test or a shared one). */
export function batchStoreContract(
  name: string,
  make: () => { batches: BatchStore; records: DecisionStore },
): void {
  describe(`BatchStore contract: ${name}`, () => {
    it("creates a batch once and sets intake's counts, not adds them", async () => {
      const { batches } = make();
      const batch = newBatch();
      expect(await batches.createBatch(batch)).toBe(true);
      expect(await batches.createBatch(batch)).toBe(false);
      const counts = { lines: 12, accepted: 10, rejected: 2 };
      await batches.finishIntake(batch.batchId, counts, new Date());
      const after = await batches.finishIntake(batch.batchId, counts, new Date());
      expect(after.status).toBe("running");
      expect(after.counts).toMatchObject(counts);
      expect((await batches.getBatch(batch.batchId))?.counts).toEqual({ ...NO_COUNTS, ...counts });
    });

    it("counts a member once, also when it is recorded concurrently", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => batches.recordMember(batch.batchId, member("P-1", "auto"))),
      );
      expect(results.filter((r) => r !== undefined).length).toBe(1);
      expect(await batches.recordMember(batch.batchId, member("P-1", "human"))).toBeUndefined();
      await batches.recordMember(batch.batchId, member("P-2", "human"));
      await batches.recordMember(batch.batchId, member("P-3", "failed"));
      const counts = (await batches.getBatch(batch.batchId))!.counts;
      expect(counts).toMatchObject({ decided: 2, auto: 1, human: 1, failed: 1, deadLettered: 0 });
    });

    it("moves a dead letter to decided when a replay decides it, and never back", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      await batches.recordMember(batch.batchId, member("P-9", "dead_lettered"));
      expect((await batches.getBatch(batch.batchId))!.counts.deadLettered).toBe(1);
      const after = await batches.recordMember(batch.batchId, member("P-9", "auto"));
      expect(after?.counts).toMatchObject({ deadLettered: 0, decided: 1, auto: 1 });
      expect(await batches.recordMember(batch.batchId, member("P-9", "dead_lettered"))).toBeUndefined();
    });

    it("counts a label once, only on an escalated member, and lists members in item order", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      await batches.recordMember(batch.batchId, member("P-b", "human"));
      await batches.recordMember(batch.batchId, member("P-a", "auto"));
      expect((await batches.recordLabel(batch.batchId, "P-b", "remove"))?.counts.reviewed).toBe(1);
      expect(await batches.recordLabel(batch.batchId, "P-b", "allow")).toBeUndefined();
      expect(await batches.recordLabel(batch.batchId, "P-a", "allow")).toBeUndefined();
      let members = await batches.members(batch.batchId);
      expect(members.map((m) => m.itemId)).toEqual(["P-a", "P-b"]);
      expect(members[1]).toMatchObject({ label: "remove", status: "pending_review", chosen: "allow" });
      // The distribution keeps the options' order (a results file reads in the policy's order).
      expect(Object.keys(members[1]!.distribution!)).toEqual(["remove", "allow"]);
      // A change follows; an undo removes the label and the count, and a new label counts again.
      expect((await batches.reviseLabel(batch.batchId, "P-b", "allow"))?.counts.reviewed).toBe(1);
      expect((await batches.reviseLabel(batch.batchId, "P-b", undefined))?.counts.reviewed).toBe(0);
      members = await batches.members(batch.batchId);
      expect(members[1]!.label).toBeUndefined();
      expect(await batches.reviseLabel(batch.batchId, "P-b", undefined)).toBeUndefined();
      expect((await batches.recordLabel(batch.batchId, "P-b", "remove"))?.counts.reviewed).toBe(1);
    });

    it("lets one caller at a time announce a phase, until its claim expires or the event went out", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      const now = Date.UTC(2030, 0, 1);
      const claims = await Promise.all(
        Array.from({ length: 4 }, () =>
          batches.claimAnnouncement(batch.batchId, "completed", now, now + 1000),
        ),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await batches.claimAnnouncement(batch.batchId, "reviewed", now, now + 1000)).toBe(true);
      // The holder crashed: its claim lapses and another takes over.
      expect(await batches.claimAnnouncement(batch.batchId, "completed", now + 2000, now + 3000)).toBe(true);
      await batches.updateBatch(batch.batchId, { completedEventPublished: true });
      expect(await batches.claimAnnouncement(batch.batchId, "completed", now + 9000, now + 9999)).toBe(false);
    });

    it("lists recent batches newest first, and keeps members out of the review queue", async () => {
      const { batches, records } = make();
      const older = newBatch({ createdAt: "2030-01-01T00:00:00.000Z" });
      const newer = newBatch({ createdAt: "2030-01-02T00:00:00.000Z" });
      await batches.createBatch(older);
      await batches.createBatch(newer);
      const listed = (await batches.listBatches(2)).map((b) => b.batchId);
      expect(listed).toEqual([newer.batchId, older.batchId]);
      await batches.recordMember(newer.batchId, member("P-x", "human"));
      const pending = await records.pageReviewQueue({
        policyIds: ["content-moderation"],
        limit: 100,
        countCap: 1000,
      });
      expect(pending.records.some((r) => r.itemId === "P-x")).toBe(false);
      await batches.updateBatch(newer.batchId, { status: "completed", completedEventPublished: true });
      expect(await batches.getBatch(newer.batchId)).toMatchObject({
        status: "completed",
        completedEventPublished: true,
      });
    });
  });
}
