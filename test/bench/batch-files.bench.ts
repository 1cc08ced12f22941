/**
 * Batch files benchmark (`npm run bench:batch-files`): the results and errors files of a large
 * batch written by the batch files step to a folder, its members read (1) from the in-memory
 * store and (2) from DynamoDB Local (batch-written straight into the table first), with the time,
 * the members per second and the live heap above the start (after a full collection, sampled
 * every 20 pieces of the files). For contrast, (3) the live heap of the same batch's results held
 * as one string, as the decide function built them before the files had a step of their own.
 *
 * Flags: --items N (default 200000, parts 1 and 3), --dynamodb-items N (default 50000, part 2),
 * --part 1|2|3.
 */
import { mkdtemp, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BatchWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { freePort } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { batchKey, memberItem, memberKey } from "../../shared/adapters/dynamodb/dynamodb-batch-items.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { type BatchStore, NO_COUNTS } from "../../shared/domain/batch.ts";
import { writeBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { largeMember } from "../helpers/large-batch.ts";
import { liveHeap, sampledStore } from "../helpers/live-heap.ts";
import { machineLine } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    items: { type: "string", default: "200000" },
    "dynamodb-items": { type: "string", default: "50000" },
    part: { type: "string" },
  },
});
const runs = (part: string) => flags.part === undefined || flags.part === part;
const MiB = 2 ** 20;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

/** Creates a complete batch of `items` accepted items in `batches` (its members written by `fill`). */
async function completeBatch(batches: BatchStore, batchId: string, items: number) {
  await batches.createBatch({
    batchId,
    policyId: "ticket-routing",
    source: `incoming/ticket-routing/${batchId}.jsonl`,
    status: "submitting",
    counts: NO_COUNTS,
    createdAt: new Date().toISOString(),
  });
  await batches.finishIntake(batchId, { lines: items, accepted: items, rejected: 0 }, new Date());
}

/** Runs the step on a complete batch; prints its time, rate and live heap. */
async function measure(name: string, batches: BatchStore, batchId: string, items: number) {
  const folder = await mkdtemp(join(tmpdir(), "bench-batch-files-"));
  const base = liveHeap();
  let peak = 0;
  const objects = sampledStore(new FsObjectStore(folder), 20, (bytes) => {
    peak = Math.max(peak, bytes - base);
  });
  const started = performance.now();
  const outcome = await writeBatchFiles(
    {
      batches,
      objects,
      files: { request: async () => {} },
      decisions: { get: async () => undefined },
      policies: { version: () => undefined },
      publisher: { publish: async () => {} },
      now: () => new Date(),
    },
    batchId,
  );
  const seconds = (performance.now() - started) / 1000;
  const bytes = (await stat(join(folder, batchKeys(batchId).results))).size;
  console.log(
    `   ${name}, ${items} items (${outcome}): ${seconds.toFixed(1)} s, ${Math.round(items / seconds)} members/s, results ${mib(bytes)}, live heap above the start at most ${mib(peak)}`,
  );
}

console.log("\n# batch files benchmark");
console.log(machineLine());

if (runs("1")) {
  const items = Number(flags.items);
  const batches = new InMemoryBatchStore();
  // The counters are not what is measured: a complete batch whose members are simply there.
  await completeBatch(batches, "b-bench-memory", items);
  for (let i = 0; i < items; i++) await batches.recordMember("b-bench-memory", largeMember(i));
  console.log("\n1. the files step, members from the in-memory store:");
  await measure("in memory", batches, "b-bench-memory", items);
}

if (runs("2")) {
  const items = Number(flags["dynamodb-items"]);
  const dynamo = await startDynamoDbLocal({ port: await freePort() });
  try {
    await ensureDecisionsTable(dynamo.endpoint, "bench");
    const client = documentClient(localServiceOptions(dynamo.endpoint));
    const batches = new DynamoDbBatchStore(client, "bench");
    const batchId = "b-bench-dynamodb";
    await completeBatch(batches, batchId, items);
    // Members written 25 at a time, 8 calls at once: the writes are not what is measured.
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < items; i += 25) {
      const members = Array.from({ length: Math.min(25, items - i) }, (_, j) => largeMember(i + j));
      writes.push(
        client.send(
          new BatchWriteCommand({
            RequestItems: {
              bench: members.map((m) => ({
                PutRequest: { Item: { ...memberKey(batchId, m.itemId), ...memberItem(m) } },
              })),
            },
          }),
        ),
      );
      if (writes.length === 8) await Promise.all(writes.splice(0));
    }
    await Promise.all(writes);
    // The counters the members would have moved, set at once: the batch is complete.
    const failed = Math.ceil(items / 20);
    await client.send(
      new UpdateCommand({
        TableName: "bench",
        Key: batchKey(batchId),
        UpdateExpression: "SET decided = :decided, failed = :failed",
        ExpressionAttributeValues: { ":decided": items - failed, ":failed": failed },
      }),
    );
    console.log("\n2. the files step, members from DynamoDB Local (queried a page at a time):");
    await measure("DynamoDB Local", batches, batchId, items);
  } finally {
    await dynamo.stop();
  }
}

if (runs("3")) {
  const items = Number(flags.items);
  const base = liveHeap();
  // What the decide function used to hold: every member, then the whole file as one string.
  const members = Array.from({ length: items }, (_, i) => largeMember(i));
  const text = members.map((m) => JSON.stringify(m)).join("\n");
  const held = liveHeap() - base;
  console.log(
    `\n3. for contrast, ${items} members and their results as one string (${mib(text.length)}): live heap ${mib(held)}`,
  );
}
