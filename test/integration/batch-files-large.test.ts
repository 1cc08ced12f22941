/**
 * A 200,000-item batch's files (observation 10 of issue 24): the decide invocation that settles
 * the last item reads no member (it only asks the files step), and the files step writes the
 * results and errors files streaming, its live heap bounded by a page of members and one piece
 * of the file, not by the batch. The store is the in-memory one (fast to fill; its own members
 * are held before the measure starts, so they count in the baseline, not in the step), the files
 * a real folder. `npm run bench:batch-files` prints the same figures, and the DynamoDB Local ones.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { type BatchStore, NO_COUNTS } from "../../shared/domain/batch.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { writeBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { batchKeys, settleMember } from "../../shared/use-cases/batch-progress.ts";
import { largeMember } from "../helpers/large-batch.ts";
import { liveHeap, sampledStore } from "../helpers/live-heap.ts";

const ITEMS = 200_000;
const MiB = 2 ** 20;

describe("a 200,000-item batch", () => {
  it("is settled without reading a member, and its files are written with the step's live heap bounded", async () => {
    const folder = await mkdtemp(join(tmpdir(), "batch-files-large-"));
    const objects = new FsObjectStore(folder);
    const batches = new InMemoryBatchStore();
    const batchId = "b-large-200000";
    await batches.createBatch({
      batchId,
      policyId: "ticket-routing",
      source: "incoming/ticket-routing/large.jsonl",
      status: "submitting",
      counts: NO_COUNTS,
      createdAt: new Date().toISOString(),
    });
    await batches.finishIntake(batchId, { lines: ITEMS, accepted: ITEMS, rejected: 0 }, new Date());
    for (let i = 0; i < ITEMS - 1; i++) await batches.recordMember(batchId, largeMember(i));

    // The decide path settles the last item: it may not read the members (a store that refuses to).
    const requests: string[] = [];
    const files = { request: async (id: string) => void requests.push(id) };
    const noMembers: BatchStore = Object.assign(Object.create(batches) as BatchStore, {
      memberPages: () => {
        throw new Error("the decide path read the batch's members");
      },
    });
    await settleMember({ batches: noMembers, files, now: () => new Date() }, batchId, largeMember(ITEMS - 1));
    expect(requests).toEqual([batchId]);

    // The files step, its live heap sampled while it streams.
    const base = liveHeap();
    let peak = 0;
    const store = sampledStore(objects, 20, (bytes) => {
      peak = Math.max(peak, bytes - base);
    });
    const events: PipelineEvent[] = [];
    const deps = {
      batches,
      objects: store,
      files,
      decisions: { get: async () => undefined },
      policies: { version: () => undefined },
      publisher: { publish: async (e: readonly PipelineEvent[]) => void events.push(...e) },
      now: () => new Date(),
    };
    expect(await writeBatchFiles(deps, batchId)).toBe("completed");
    expect(events.map((e) => e.detailType)).toEqual(["Batch Completed"]);

    const results = join(folder, batchKeys(batchId).results);
    let lines = 0;
    for await (const line of createInterface({ input: createReadStream(results) })) if (line) lines++;
    const decided = Array.from({ length: ITEMS }, (_, i) => i).filter((i) => i % 20 !== 0).length;
    expect(lines).toBe(decided);
    const bytes = (await stat(results)).size;
    console.log(
      `batch files step, ${ITEMS} items: results file ${(bytes / MiB).toFixed(1)} MiB; live heap above the start at most ${(peak / MiB).toFixed(1)} MiB`,
    );
    // A page of members and a piece of the file; writing the file from one string would keep it all.
    expect(bytes).toBeGreaterThan(30 * MiB);
    expect(peak).toBeLessThan(16 * MiB);
  }, 600_000);
});
