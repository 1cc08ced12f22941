/**
 * Batch intake on a generated file larger than the intake function's memory, in a process of its
 * own so that its peak memory can be read: a good line, one line of `--line-mib` MiB (over the
 * line limit, so refused), then `--lines` more good lines. The file is generated as a stream and
 * never written to disk. Prints one JSON line: the batch's counts, the refused lines, the bytes
 * read, the peak resident set size and the time taken.
 *
 *   node --import tsx test/helpers/intake-memory-child.ts --line-mib 600 --lines 2000
 */
import { parseArgs } from "node:util";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import type { OutgoingMessage } from "../../shared/domain/message-queue.ts";
import type { ObjectStore, StoredObject } from "../../shared/domain/object-store.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { objectText } from "./object-text.ts";
import { TEAMS_POLICY } from "./policies.ts";
import { recordingQueue } from "./recording-queue.ts";

const { values } = parseArgs({
  options: { "line-mib": { type: "string", default: "600" }, lines: { type: "string", default: "2000" } },
});
const lineMiB = Number(values["line-mib"]);
const lines = Number(values.lines);
const KEY = "incoming/tickets/b-memory-000001/huge.jsonl";
const MIB = 2 ** 20;
let bytesRead = 0;

/** The file: a good line, the long line in 1 MiB chunks, then the good lines. */
async function* generated(): AsyncGenerator<Uint8Array> {
  const good = (n: number) => Buffer.from(`${JSON.stringify({ id: `M-${n}`, state: `ticket ${n}` })}\n`);
  yield good(0);
  yield Buffer.from('{"id":"M-long","state":"');
  for (let i = 0; i < lineMiB; i++) yield Buffer.alloc(MIB, "x");
  yield Buffer.from('"}\n');
  for (let n = 1; n <= lines; n++) yield good(n);
}

/** An object store whose incoming file is generated and whose other objects live in memory. */
class GeneratedStore implements ObjectStore {
  private readonly kept = new Map<string, Buffer>();
  async put(key: string, body: string | Uint8Array): Promise<void> {
    this.kept.set(key, Buffer.from(body));
  }
  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const piece of body) chunks.push(Buffer.from(piece));
    this.kept.set(key, Buffer.concat(chunks));
  }
  async read(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    if (key === KEY)
      return (async function* () {
        for await (const chunk of generated()) {
          bytesRead += chunk.length;
          yield chunk;
        }
      })();
    const body = this.kept.get(key);
    return body
      ? (async function* () {
          yield body;
        })()
      : undefined;
  }
  async list(prefix: string): Promise<StoredObject[]> {
    return [...this.kept].filter(([k]) => k.startsWith(prefix)).map(([key, b]) => ({ key, bytes: b.length }));
  }
  async delete(key: string): Promise<void> {
    this.kept.delete(key);
  }
}

let queued = 0;
const queue = recordingQueue({
  push: (...messages: OutgoingMessage[]) => {
    queued += messages.length;
  },
});

const objects = new GeneratedStore();
const started = performance.now();
const batch = await runIntake(
  {
    batches: new InMemoryBatchStore(),
    objects,
    now: () => new Date(),
    files: { request: async () => undefined },
    policies: new PolicyRegistry([TEAMS_POLICY]),
    queue,
  },
  KEY,
);
const refused = (await objectText(objects, batchKeys(batch.batchId).rejected))
  .split("\n")
  .filter(Boolean)
  .map((l: string) => JSON.parse(l) as unknown);
console.log(
  JSON.stringify({
    counts: batch.counts,
    queued,
    refused,
    bytesRead,
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  }),
);
