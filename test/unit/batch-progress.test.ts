/**
 * Batch progress on the in-memory stores and a real folder, with the batch files step run as its
 * queue would run it: intake from a file with bad lines (a repeated id refused by the table's
 * line record), members counted once (a redelivered item, a dead letter decided after a replay),
 * the files written by their own step and "Batch Completed" once, "Batch Reviewed" once the
 * escalated items have labels, and changes after completion rewriting the files once per delay,
 * not once per change.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { batchCompletedSchema } from "../../shared/domain/contracts/events.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { OutgoingMessage } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { BATCH_FILES, BATCH_LANE } from "../../shared/domain/topology.ts";
import { writeBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { batchOfKey, runIntake } from "../../shared/use-cases/batch-intake.ts";
import {
  batchKeys,
  settleLabel,
  settleMember,
  settleRevision,
} from "../../shared/use-cases/batch-progress.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { recordingQueue } from "../helpers/recording-queue.ts";

let folder: string;
let objects: FsObjectStore;
let batches: InMemoryBatchStore;
let events: PipelineEvent[];
let sent: OutgoingMessage[];
/** The files step's queue: what was asked, and when it may run. */
let requests: { batchId: string; delaySeconds: number }[];

/** Intake's queue: it keeps what it is sent. */
const queue = recordingQueue({ push: (...messages: OutgoingMessage[]) => sent.push(...messages) });

const files = {
  request: async (batchId: string, delaySeconds = 0) => void requests.push({ batchId, delaySeconds }),
};
const deps = () => ({
  batches,
  objects,
  files,
  policies: new PolicyRegistry([TEAMS_POLICY]),
  queue,
  now: () => new Date(),
});
const filesDeps = () => ({
  batches,
  objects,
  files,
  // No records here: each line says the status its member was decided with.
  decisions: { get: async () => undefined },
  policies: new PolicyRegistry([TEAMS_POLICY]),
  publisher: { publish: async (e: readonly PipelineEvent[]) => void events.push(...e) },
  now: () => new Date(),
});

/** Runs the files step for the requests that are due (delayed ones too when `delayed`), as its queue would. */
async function runFilesStep(delayed = false): Promise<string[]> {
  const due = requests.filter((r) => delayed || r.delaySeconds === 0);
  requests = requests.filter((r) => !due.includes(r));
  const outcomes: string[] = [];
  for (const r of due) outcomes.push(await writeBatchFiles(filesDeps(), r.batchId));
  return outcomes;
}

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "batch-progress-"));
  objects = new FsObjectStore(folder);
  batches = new InMemoryBatchStore();
  events = [];
  sent = [];
  requests = [];
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

const lines = async (key: string) =>
  (await readFile(join(folder, key), "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("batch intake and progress", () => {
  it("queues the good lines, refuses the bad ones by line, and leaves the files and events to their own step", async () => {
    const key = "incoming/tickets/b-test-000001/tickets.jsonl";
    const file = [
      JSON.stringify({ id: "A", state: "charged twice" }),
      "",
      JSON.stringify({ id: "B", state: "" }),
      JSON.stringify({ id: "C", policy: "other", state: "x" }),
      JSON.stringify({ id: "A", state: "again" }),
      JSON.stringify({ id: "D", state: "app crashes" }),
    ];
    await objects.put(key, file.join("\n"));
    expect(batchOfKey(key)).toEqual({ policyId: "tickets", batchId: "b-test-000001", name: "tickets.jsonl" });
    const batch = await runIntake(deps(), key);
    expect(batch.counts).toMatchObject({ lines: 5, accepted: 2, rejected: 3 });
    expect(sent.map((m) => JSON.parse(m.body))).toEqual([
      { id: "A", policy: "tickets", state: "charged twice", batchId: "b-test-000001" },
      { id: "D", policy: "tickets", state: "app crashes", batchId: "b-test-000001" },
    ]);
    // The table, not intake's memory, holds which line each id is on.
    expect(await batches.claimLine(batch.batchId, "A", 99)).toBe(1);

    await settleMember(deps(), batch.batchId, decided("A", "auto"));
    await settleMember(deps(), batch.batchId, decided("A", "auto")); // a redelivery
    await settleMember(deps(), batch.batchId, {
      itemId: "D",
      policyId: "tickets",
      policyVersion: 0,
      state: "dead_lettered",
      problem: "timeout",
    });
    // Complete (1 decided + 1 dead letter): the decide path asked for the files, and wrote none.
    expect(requests.some((r) => r.delaySeconds === 0)).toBe(true);
    expect(events).toHaveLength(0);
    await expect(readFile(join(folder, batchKeys(batch.batchId).results))).rejects.toThrow();
    expect(await runFilesStep()).toContain("completed");
    expect(events).toHaveLength(1);
    const errors = await lines(batchKeys(batch.batchId).errors);
    expect(errors.map((l) => l.line ?? l.id)).toEqual([3, 4, 5, "D"]);

    // A replay decides the dead letter: it moves to decided; the files follow after the delay.
    await settleMember(deps(), batch.batchId, decided("D", "human"));
    const after = (await batches.getBatch(batch.batchId))!;
    expect(after.counts).toMatchObject({ decided: 2, auto: 1, human: 1, deadLettered: 0 });
    expect(after.status).toBe("completed");
    expect(requests).toEqual([{ batchId: batch.batchId, delaySeconds: BATCH_FILES.rewriteDelaySeconds }]);
    expect(await lines(batchKeys(batch.batchId).results)).toHaveLength(1);
    expect(await runFilesStep(true)).toEqual(["rewritten"]);
    expect((await lines(batchKeys(batch.batchId).results)).map((l) => l.id)).toEqual(["A", "D"]);
    expect((await lines(batchKeys(batch.batchId).errors)).map((l) => l.line ?? l.id)).toEqual([3, 4, 5]);
    const completed = events.filter((e) => e.detailType === DetailType.batchCompleted);
    expect(completed).toHaveLength(1);
    expect(batchCompletedSchema.safeParse(completed[0]!.detail).error).toBeUndefined();

    // The escalated item gets its label: the results carry it, and "Batch Reviewed" goes out once.
    await settleLabel(deps(), batch.batchId, "D", "technical");
    await settleLabel(deps(), batch.batchId, "D", "technical");
    await runFilesStep();
    expect(await runFilesStep(true)).toEqual(["current"]); // the delayed rewrite finds nothing to do
    expect(events.filter((e) => e.detailType === DetailType.batchReviewed)).toHaveLength(1);
    expect(await lines(batchKeys(batch.batchId).results)).toEqual([
      expect.objectContaining({ id: "A", route: "auto", status: "auto_approved" }),
      expect.objectContaining({ id: "D", route: "human", status: "reviewed", label: "technical" }),
    ]);
  });

  it("rewrites the files once for many label changes after completion, and again when one lands during the write", async () => {
    const key = "incoming/tickets/b-test-000002/tickets.jsonl";
    const ids = ["H-1", "H-2", "H-3"];
    await objects.put(key, ids.map((id) => JSON.stringify({ id, state: "x" })).join("\n"));
    const batch = await runIntake(deps(), key);
    for (const id of ids) await settleMember(deps(), batch.batchId, decided(id, "human"));
    for (const id of ids) await settleLabel(deps(), batch.batchId, id, "billing");
    await runFilesStep(true);
    expect(events.map((e) => e.detailType)).toEqual([DetailType.batchCompleted, DetailType.batchReviewed]);
    let writes = 0;
    const counting = Object.assign(Object.create(objects) as FsObjectStore, {
      putStream: (k: string, body: AsyncIterable<string | Uint8Array>) => {
        writes++;
        return objects.putStream(k, body);
      },
    });
    // Fifty changes and undos: one stale period, one delayed request, no write until it runs.
    for (let i = 0; i < 50; i++) {
      const id = ids[i % 3]!;
      await settleRevision(deps(), batch.batchId, id, i % 2 ? "technical" : undefined);
      if (i % 2 === 0) await settleLabel(deps(), batch.batchId, id, "billing");
    }
    expect(requests).toEqual([{ batchId: batch.batchId, delaySeconds: BATCH_FILES.rewriteDelaySeconds }]);
    const rewrite = await writeBatchFiles({ ...filesDeps(), objects: counting }, batch.batchId);
    expect(rewrite).toBe("rewritten");
    expect(writes).toBe(2); // the results file and the errors file, once each
    const labels = Object.fromEntries(
      (await lines(batchKeys(batch.batchId).results)).map((l) => [l.id, l.label]),
    );
    expect(labels).toEqual({ "H-1": "billing", "H-2": "technical", "H-3": "technical" });
    const statuses = (await lines(batchKeys(batch.batchId).results)).map((l) => l.status);
    expect(statuses).toEqual(["reviewed", "reviewed", "reviewed"]);
    // An undone label puts the item back in the queue: its line says pending_review and has no label.
    await settleRevision(deps(), batch.batchId, "H-3", undefined);
    await writeBatchFiles(filesDeps(), batch.batchId);
    const undone = (await lines(batchKeys(batch.batchId).results)).find((l) => l.id === "H-3");
    expect(undone).toMatchObject({ status: "pending_review" });
    expect(undone).not.toHaveProperty("label");
    await settleLabel(deps(), batch.batchId, "H-3", "technical");
    // A change that lands while the files are written: they stay stale and the step asks again.
    requests = [];
    await settleRevision(deps(), batch.batchId, "H-1", "billing");
    requests = [];
    const racing = Object.assign(Object.create(objects) as FsObjectStore, {
      putStream: async (k: string, body: AsyncIterable<string | Uint8Array>) => {
        await settleRevision(deps(), batch.batchId, "H-2", "technical");
        return objects.putStream(k, body);
      },
    });
    await writeBatchFiles({ ...filesDeps(), objects: racing }, batch.batchId);
    expect(requests).toEqual([{ batchId: batch.batchId, delaySeconds: BATCH_FILES.rewriteDelaySeconds }]);
    expect((await batches.getBatch(batch.batchId))!.filesStaleSince).toBeDefined();
  });

  it("refuses a repeated id by its line across groups of ten, and sends nothing twice when intake runs again", async () => {
    const key = "incoming/tickets/posts.jsonl";
    const file = Array.from({ length: 25 }, (_, i) => JSON.stringify({ id: `X-${i % 20}`, state: "x" }));
    file.push(JSON.stringify({ id: "X-21", state: "x" }), JSON.stringify({ id: "X-21", state: "y" }));
    await objects.put(key, file.join("\n"));
    const first = await runIntake(deps(), key, { etag: "abc" });
    expect(first.counts).toMatchObject({ lines: 27, accepted: 21, rejected: 6 });
    const refused = (await lines(batchKeys(first.batchId).rejected)).map((r) => [
      r.line,
      r.problems[0].message,
    ]);
    expect(refused).toEqual([
      ...[21, 22, 23, 24, 25].map((line) => [line, `"X-${line - 21}" repeats line ${line - 20}`]),
      [27, `"X-21" repeats line 26`],
    ]);
    const again = await runIntake(deps(), key, { etag: "abc" });
    expect(again.batchId).toBe(first.batchId);
    expect(again.counts).toMatchObject({ lines: 27, accepted: 21, rejected: 6 });
    expect(new Set(sent.map((m) => m.body)).size).toBe(21);
  });

  it("streams the refused lines in line order, holding a bounded number between two groups", async () => {
    // One good line, then more bad lines than intake may hold, then a repeat of the first id.
    const key = "incoming/tickets/many-bad.jsonl";
    const bad = BATCH_LANE.refusedLinesHeld * 2 + 500;
    const file = [JSON.stringify({ id: "G-1", state: "x" })];
    for (let i = 0; i < bad; i++) file.push("{not json");
    file.push(JSON.stringify({ id: "G-1", state: "again" }), JSON.stringify({ id: "G-2", state: "y" }));
    await objects.put(key, file.join("\n"));
    const pieces: number[] = [];
    const counting = Object.assign(Object.create(objects) as FsObjectStore, {
      putStream: async (target: string, body: AsyncIterable<string | Uint8Array>) => {
        async function* counted() {
          for await (const piece of body) {
            if (target.endsWith("rejected.jsonl")) pieces.push(String(piece).split("\n").length - 1);
            yield piece;
          }
        }
        return objects.putStream(target, counted());
      },
    });
    const batch = await runIntake({ ...deps(), objects: counting }, key, { etag: "abc" });
    expect(batch.counts).toMatchObject({ lines: bad + 3, accepted: 2, rejected: bad + 1 });
    const refused = (await lines(batchKeys(batch.batchId).rejected)).map((r) => r.line);
    expect(refused).toEqual(Array.from({ length: bad + 1 }, (_, i) => i + 2));
    // Written as it was read: several pieces, none holding more than intake may hold.
    expect(pieces.length).toBeGreaterThan(2);
    expect(Math.max(...pieces)).toBeLessThanOrEqual(BATCH_LANE.refusedLinesHeld);
  });

  it("reads CSV into items with metadata", async () => {
    const key = "incoming/tickets/posts.csv";
    await objects.put(key, 'id,state,channel\nX-1,"charged, twice",email\nX-2,,chat\n');
    const batch = await runIntake(deps(), key, { etag: "abc" });
    expect(batch.counts).toMatchObject({ lines: 2, accepted: 1, rejected: 1 });
    expect(JSON.parse(sent[0]!.body)).toMatchObject({
      id: "X-1",
      state: "charged, twice",
      metadata: { channel: "email" },
    });
  });
});
