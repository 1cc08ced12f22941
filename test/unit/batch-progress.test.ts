/**
 * Batch progress on the in-memory stores and a real folder: intake from a file with bad lines,
 * members counted once (a redelivered item, a dead letter decided after a replay), "Batch
 * Completed" once with its files, and "Batch Reviewed" once the escalated items have labels.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory-batch-store.ts";
import { batchCompletedSchema } from "../../shared/domain/contracts/events.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { OutgoingMessage } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { batchOfKey, runIntake } from "../../shared/use-cases/batch-intake.ts";
import { batchKeys, settleLabel, settleMember } from "../../shared/use-cases/batch-progress.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { recordingQueue } from "../helpers/recording-queue.ts";

let folder: string;
let objects: FsObjectStore;
let batches: InMemoryBatchStore;
let events: PipelineEvent[];
let sent: OutgoingMessage[];

/** Intake's queue: it keeps what it is sent. */
const queue = recordingQueue({ push: (...messages: OutgoingMessage[]) => sent.push(...messages) });

const deps = () => ({
  batches,
  objects,
  publisher: { publish: async (e: readonly PipelineEvent[]) => void events.push(...e) },
  policies: new PolicyRegistry([TEAMS_POLICY]),
  queue,
});

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "batch-progress-"));
  objects = new FsObjectStore(folder);
  batches = new InMemoryBatchStore();
  events = [];
  sent = [];
});

const decided = (itemId: string, route: "auto" | "human") => ({
  itemId,
  policyId: "tickets",
  policyVersion: 1,
  state: route,
  route,
  chosen: "billing",
  distribution: { billing: 0.9, technical: 0.1 },
  reason: route === "auto" ? "confident" : "below_threshold",
  status: route === "auto" ? "auto_approved" : "pending_review",
});

describe("batch intake and progress", () => {
  it("queues the good lines with the batch id, refuses the bad ones by line, and completes once", async () => {
    const key = "incoming/tickets/b-test-000001/tickets.jsonl";
    const lines = [
      JSON.stringify({ id: "A", state: "charged twice" }),
      "",
      JSON.stringify({ id: "B", state: "" }),
      JSON.stringify({ id: "C", policy: "other", state: "x" }),
      JSON.stringify({ id: "A", state: "again" }),
      JSON.stringify({ id: "D", state: "app crashes" }),
    ];
    await objects.put(key, lines.join("\n"));
    expect(batchOfKey(key)).toEqual({ policyId: "tickets", batchId: "b-test-000001", name: "tickets.jsonl" });
    const batch = await runIntake(deps(), key);
    expect(batch.counts).toMatchObject({ lines: 5, accepted: 2, rejected: 3 });
    expect(sent.map((m) => JSON.parse(m.body))).toEqual([
      { id: "A", policy: "tickets", state: "charged twice", batchId: "b-test-000001" },
      { id: "D", policy: "tickets", state: "app crashes", batchId: "b-test-000001" },
    ]);

    await settleMember(deps(), batch.batchId, decided("A", "auto"));
    await settleMember(deps(), batch.batchId, decided("A", "auto")); // a redelivery
    await settleMember(deps(), batch.batchId, {
      itemId: "D",
      policyId: "tickets",
      policyVersion: 0,
      state: "dead_lettered",
      problem: "timeout",
    });
    expect(events).toHaveLength(1); // complete: 1 decided + 1 dead letter
    const errors = (await readFile(join(folder, batchKeys(batch.batchId).errors), "utf8")).trim().split("\n");
    expect(errors.map((l) => JSON.parse(l).line ?? JSON.parse(l).id)).toEqual([3, 4, 5, "D"]);
    // A replay decides the dead letter: it moves to decided; the batch was already announced.
    await settleMember(deps(), batch.batchId, decided("D", "human"));
    const after = (await batches.getBatch(batch.batchId))!;
    expect(after.counts).toMatchObject({ decided: 2, auto: 1, human: 1, deadLettered: 0 });
    expect(after.status).toBe("completed");
    const rewritten = await readFile(join(folder, batchKeys(batch.batchId).results), "utf8");
    expect(rewritten).toMatch(/"id":"D","route":"human"/);
    expect(await readFile(join(folder, batchKeys(batch.batchId).errors), "utf8")).not.toMatch(/"D"/);
    const completed = events.filter((e) => e.detailType === DetailType.batchCompleted);
    expect(completed).toHaveLength(1);
    expect(batchCompletedSchema.safeParse(completed[0]!.detail).error).toBeUndefined();

    // The escalated item gets its label: the results carry it, and "Batch Reviewed" goes out once.
    await settleLabel(deps(), batch.batchId, "D", "technical");
    await settleLabel(deps(), batch.batchId, "D", "technical");
    expect(events.filter((e) => e.detailType === DetailType.batchReviewed)).toHaveLength(1);
    const results = (await readFile(join(folder, batchKeys(batch.batchId).results), "utf8"))
      .trim()
      .split("\n");
    expect(results.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ id: "A", route: "auto", status: "auto_approved" }),
      expect.objectContaining({ id: "D", route: "human", label: "technical" }),
    ]);
  });

  it("sends nothing twice and counts nothing twice when intake runs again on the same file", async () => {
    const key = "incoming/tickets/posts.csv";
    await objects.put(key, 'id,state,channel\nX-1,"charged, twice",email\nX-2,,chat\n');
    const first = await runIntake(deps(), key, { etag: "abc" });
    const again = await runIntake(deps(), key, { etag: "abc" });
    expect(again.batchId).toBe(first.batchId);
    expect(again.counts).toMatchObject({ lines: 2, accepted: 1, rejected: 1 });
    expect(JSON.parse(sent[0]!.body)).toMatchObject({
      id: "X-1",
      state: "charged, twice",
      metadata: { channel: "email" },
    });
  });
});
