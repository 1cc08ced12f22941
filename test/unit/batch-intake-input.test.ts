/**
 * Batch intake reads its file through the one input reader: a byte-order mark, invalid UTF-8,
 * a line over the limit and a broken CSV quote each cost their own line (refused with its number
 * in the batch's refused lines), never the rest of the file, and nothing is decided as
 * replacement characters.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { MAX_LINE_BYTES } from "../../shared/domain/input/lines.ts";
import type { OutgoingMessage } from "../../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { objectText } from "../helpers/object-text.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { recordingQueue } from "../helpers/recording-queue.ts";

let objects: FsObjectStore;
let sent: OutgoingMessage[];

/** Intake's queue: it keeps what it is sent. */
const queue = recordingQueue({ push: (...messages: OutgoingMessage[]) => sent.push(...messages) });

const deps = () => ({
  batches: new InMemoryBatchStore(),
  objects,
  files: { request: async () => undefined },
  now: () => new Date(),
  policies: new PolicyRegistry([TEAMS_POLICY]),
  queue,
});

beforeEach(async () => {
  objects = new FsObjectStore(await mkdtemp(join(tmpdir(), "intake-input-")));
  sent = [];
});

/** Runs intake on `bytes` stored under `name`; returns what was queued and what was refused. */
async function intake(name: string, bytes: Buffer) {
  const key = `incoming/tickets/b-input-000001/${name}`;
  await objects.put(key, bytes);
  const dependencies = deps();
  const batch = await runIntake(dependencies, key);
  const refused = (await objectText(objects, batchKeys(batch.batchId).rejected))
    .split("\n")
    .filter(Boolean)
    .map((l: string) => JSON.parse(l) as { line: number; problems: { field: string; message: string }[] });
  return { batch, queued: sent.map((m) => JSON.parse(m.body) as { id: string; state: unknown }), refused };
}

const line = (id: string, state: string) => JSON.stringify({ id, state });

describe("batch intake input", () => {
  it("refuses invalid UTF-8 and an over-long line by number and queues the rest, BOM and CRLF read", async () => {
    const { batch, queued, refused } = await intake(
      "tickets.jsonl",
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(`${line("I-1", "first")}\r\n${line("I-2", "caf")}`),
        Buffer.from([0xe9, 0x20, 0xff]),
        Buffer.from(`\r\n${line("I-3", "x".repeat(MAX_LINE_BYTES))}\r\n${line("I-4", "last")}\r\n`),
      ]),
    );
    expect(queued.map((q) => [q.id, q.state])).toEqual([
      ["I-1", "first"],
      ["I-4", "last"],
    ]);
    expect(refused.map((r) => [r.line, r.problems[0]!.field])).toEqual([
      [2, "line"],
      [3, "line"],
    ]);
    expect(refused[0]!.problems[0]!.message).toMatch(/not valid UTF-8/);
    expect(refused[1]!.problems[0]!.message).toMatch(/over the limit of 262144 bytes per line/);
    expect(batch.counts).toMatchObject({ lines: 4, accepted: 2, rejected: 2 });
    expect(JSON.stringify(queued)).not.toContain("\uFFFD");
  });

  it("reads a CSV from Excel (BOM, CRLF) with one quote left open, refusing only that line", async () => {
    const rows = [
      "id,state,channel",
      'X-1,"charged, twice",email',
      'X-2,"unterminated quote,web',
      "X-3,app crashes,web",
    ];
    const { queued, refused } = await intake(
      "posts.csv",
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${rows.join("\r\n")}\r\n`)]),
    );
    expect(queued.map((q) => q.id)).toEqual(["X-1", "X-3"]);
    expect(refused).toEqual([
      {
        line: 3,
        stage: "intake",
        problems: [{ field: "line", message: "CSV: a quoted field is not closed by the end of the file" }],
      },
    ]);
  });

  it("names each refused line's item id in the errors file when the line gives one", async () => {
    // Before, an entry had the line number only: {"line": 2, "stage": "intake", "problems": [...]}.
    const lines = [
      JSON.stringify({ id: "T-1", state: "charged twice" }),
      JSON.stringify({ id: "T-2", state: "" }),
      JSON.stringify({ id: "T-3", policy: "another", state: "x" }),
      "{not json",
      JSON.stringify({ state: "no id" }),
      JSON.stringify({ id: "T-1", state: "again" }),
    ];
    const { refused } = await intake("tickets.jsonl", Buffer.from(`${lines.join("\n")}\n`));
    expect(refused.map((r) => [r.line, (r as { id?: string }).id])).toEqual([
      [2, "T-2"],
      [3, "T-3"],
      [4, undefined],
      [5, undefined],
      [6, "T-1"],
    ]);
    expect(Object.keys(refused[0]!)).toEqual(["line", "id", "stage", "problems"]);
  });
});

describe("the intake lease", () => {
  it("is taken when intake starts and renewed as it reads, so a stopped reader shows", async () => {
    let now = new Date("2026-12-01T10:00:00.000Z");
    const batches = new InMemoryBatchStore();
    const leases: string[] = [];
    const watched = Object.create(batches) as InMemoryBatchStore;
    watched.updateBatch = async (batchId, fields) => {
      if (fields.intakeUntil) leases.push(fields.intakeUntil);
      return batches.updateBatch(batchId, fields);
    };
    const key = "incoming/tickets/b-lease-000001/tickets.jsonl";
    const lines = Array.from({ length: 100 }, (_, i) =>
      JSON.stringify({ id: `L-${i}`, state: `ticket ${i}` }),
    );
    await objects.put(key, `${lines.join("\n")}\n`);
    // Each group of ten lines takes 10 s of the clock: the lease (60 s) is renewed every 20 s.
    const clockQueue = recordingQueue({
      push: (...messages: OutgoingMessage[]) => {
        sent.push(...messages);
        now = new Date(now.getTime() + 10_000);
      },
    });
    const batch = await runIntake({ ...deps(), batches: watched, queue: clockQueue, now: () => now }, key);
    expect(batch.counts.accepted).toBe(100);
    expect(leases[0]).toBe("2026-12-01T10:01:00.000Z");
    expect(leases.length).toBeGreaterThanOrEqual(4);
    expect(leases.at(-1)! > "2026-12-01T10:02:00.000Z").toBe(true);
  });
});
