/**
 * One contract suite for every BatchStore (DynamoDB on DynamoDB Local, and in memory): a batch is
 * created once; intake's counts are set, not added, so a rerun does not double them; a member is
 * counted once however often (or however concurrently) it is recorded; a dead letter decided
 * later moves to decided; a label is counted once; members page in item order, filtered by state;
 * intake's line records refuse a repeated id; the files' stale mark opens once per period; recent
 * batches come newest first; and a member never shows up in the review queue.
 */
import { describe, expect, it } from "vitest";
import { type BatchMember, type BatchRecord, type BatchStore, NO_COUNTS } from "../../shared/domain/batch.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import { TABLE_INDEXES } from "../../shared/domain/topology.ts";

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

/** Every member of a batch, through its pages. */
async function allMembers(batches: BatchStore, batchId: string, only?: readonly BatchMember["state"][]) {
  const members: BatchMember[] = [];
  for await (const page of batches.memberPages(batchId, only)) members.push(...page);
  return members;
}

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
      let members = await allMembers(batches, batch.batchId);
      expect(members.map((m) => m.itemId)).toEqual(["P-a", "P-b"]);
      expect(members[1]).toMatchObject({ label: "remove", status: "pending_review", chosen: "allow" });
      // The distribution keeps the options' order (a results file reads in the policy's order).
      expect(Object.keys(members[1]!.distribution!)).toEqual(["remove", "allow"]);
      // A change follows; an undo removes the label and the count, and a new label counts again.
      expect((await batches.reviseLabel(batch.batchId, "P-b", "allow"))?.counts.reviewed).toBe(1);
      expect((await batches.reviseLabel(batch.batchId, "P-b", undefined))?.counts.reviewed).toBe(0);
      members = await allMembers(batches, batch.batchId);
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

    it("pages members in item order, filtered by state, however many there are", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      const count = TABLE_INDEXES.scanPage + 20;
      const ids = Array.from({ length: count }, (_, i) => `M-${String(i).padStart(5, "0")}`);
      // A few at a time: every member moves the batch's counters, so all at once would only conflict.
      for (let i = 0; i < count; i += 5)
        await Promise.all(
          ids
            .slice(i, i + 5)
            .map((id, j) =>
              batches.recordMember(batch.batchId, member(id, (i + j) % 10 === 0 ? "failed" : "auto")),
            ),
        );
      let pages = 0;
      const seen: string[] = [];
      for await (const page of batches.memberPages(batch.batchId)) {
        pages++;
        expect(page.length).toBeLessThanOrEqual(TABLE_INDEXES.scanPage);
        seen.push(...page.map((m) => m.itemId));
      }
      expect(pages).toBeGreaterThan(1);
      expect(seen).toEqual(ids);
      const failed = await allMembers(batches, batch.batchId, ["failed", "dead_lettered"]);
      expect(failed.map((m) => m.itemId)).toEqual(ids.filter((_, i) => i % 10 === 0));
    }, 120_000);

    it("records the line that holds an id once: the same line again is a rerun, another is a repeat", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      const raced = await Promise.all([3, 7, 9].map((line) => batches.claimLine(batch.batchId, "R-1", line)));
      expect(new Set(raced).size).toBe(1);
      const holder = raced[0]!;
      expect(await batches.claimLine(batch.batchId, "R-1", holder)).toBe(holder);
      expect(await batches.claimLine(batch.batchId, "R-1", 42)).toBe(holder);
      expect(await batches.claimLine(batch.batchId, "R-2", 42)).toBe(42);
      expect(await batches.claimLine(newBatch().batchId, "R-1", 5)).toBe(5); // another batch's file
      // Members are unaffected by the line records.
      expect(await allMembers(batches, batch.batchId)).toEqual([]);
    });

    it("marks the files stale once per stale period, and current only when nothing changed since", async () => {
      const { batches } = make();
      const batch = newBatch();
      await batches.createBatch(batch);
      const at = new Date("2030-03-01T00:00:00.000Z");
      expect(await batches.markFilesStale(batch.batchId, at)).toBe(true);
      expect(await batches.markFilesStale(batch.batchId, new Date(at.getTime() + 1000))).toBe(false);
      const stale = (await batches.getBatch(batch.batchId))!;
      expect(stale).toMatchObject({ filesVersion: 2, filesStaleSince: at.toISOString() });
      expect(await batches.markFilesCurrent(batch.batchId, 1)).toBe(false); // a change came after version 1
      expect(await batches.markFilesCurrent(batch.batchId, 2)).toBe(true);
      expect((await batches.getBatch(batch.batchId))!.filesStaleSince).toBeUndefined();
      expect(await batches.markFilesStale(batch.batchId, at)).toBe(true); // a new stale period
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
