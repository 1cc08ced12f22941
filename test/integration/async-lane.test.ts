/**
 * The async lane on the real local services: batch intake onto the batch queue, the submit
 * function gathering objects, the async endpoint's stand-in running them on the real container
 * (tiny model), its notifications on local SQS, DynamoDB Local and the local bus. The result
 * function runs in a child process that is killed (SIGKILL) mid-way and started again: every
 * item is still decided exactly once with its event. A malformed answer line fails only its item
 * (submitted again, then dead-lettered with the reason); an object whose invocation keeps
 * failing is tried again and then its items are dead-lettered with the reason.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import type { BusEvent } from "../../infra/local/event-bus.ts";
import { type LocalWiring, startLocalWiring } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { type BatchRecord, isComplete } from "../../shared/domain/batch.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { RULES } from "../../shared/domain/topology.ts";
import { queueBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const CHILD = join(REPO_ROOT, "test/helpers/async-results-child.ts");
/** Objects of this many items: a batch of 60 makes several, so a kill lands between and inside them. */
const ITEMS_PER_OBJECT = 10;

let endpoint: RunningServer;
let wiring: LocalWiring;
let folder: string;
let batches: DynamoDbBatchStore;
const made: BusEvent[] = [];
const children = new Set<ChildProcess>();

/** The items of the object an input key names (the test reads the lane's own items file). */
const itemIdsOf = (inputKey: string): string[] =>
  readFileSync(join(folder, inputKey.replace("async/input/", "async/items/")), "utf8")
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { id: string }).id);

beforeAll(async () => {
  endpoint = await startTestEndpoint({ "queue-size": "64" });
  folder = await mkdtemp(join(tmpdir(), "async-lane-"));
  wiring = await startLocalWiring({
    endpointUrl: endpoint.url,
    root: REPO_ROOT,
    ports: { dynamodb: 0, sqs: 0, bus: 0 },
    intake: { visibilitySeconds: 30, maxItemFailures: 3, maxReceiveCount: 1000 },
    batchFolder: folder,
    asyncLane: {
      // Run by the test, in child processes it can kill.
      resultPollers: 0,
      resultsVisibilitySeconds: 5,
      itemsPerObject: ITEMS_PER_OBJECT,
      gatherMs: 300,
      settings: { MAX_ITEM_FAILURES: "2" },
      faults: {
        // Every content-moderation object fails, as a container that crashes on it would.
        fail: (inputKey) =>
          inputKey.includes("/content-moderation/")
            ? "ClientError: Received server error (500) from model"
            : undefined,
        // The answer to item M-1 breaks the System One contract, whichever object carries it.
        rewriteAnswer: (inputKey, index, line) =>
          itemIdsOf(inputKey)[index] === "M-1" ? '{"status": 200, "body": {"answers": {}}}' : line,
      },
    },
    started: [],
  });
  for (const route of ["auto", "human"] as const)
    wiring.bus.addRule({
      name: `observe-${route}`,
      pattern: RULES[route].pattern,
      target: async (event) => void made.push(event),
    });
  batches = new DynamoDbBatchStore(
    documentClient(localServiceOptions(wiring.env.AWS_ENDPOINT_URL_DYNAMODB!)),
    wiring.env.DECISIONS_TABLE!,
  );
}, 180_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await wiring?.stop();
  await endpoint?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Submits a batch file of `lines` under `policy` as intake does; returns its id. */
async function submit(policy: string, name: string, lines: string[]): Promise<string> {
  const objects = new FsObjectStore(folder);
  const key = `incoming/${policy}/b-async-${name}/${name}.jsonl`;
  await objects.put(key, `${lines.join("\n")}\n`);
  const batch = await runIntake(
    {
      batches,
      objects,
      queue: wiring.queues.batch!,
      files: queueBatchFiles(wiring.queues.batchFiles!),
      policies: await PolicyRegistry.fromFolder(join(REPO_ROOT, "events/policies")),
      now: () => new Date(),
    },
    key,
  );
  return batch.batchId;
}

/** Starts the result function in a child process; resolves once it polls. */
function startConsumer(onHandled: () => void = () => undefined): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ASYNC_CHILD_ENV: JSON.stringify(wiring.asyncLane!.env),
      ASYNC_CHILD_QUEUE_URL: wiring.asyncLane!.notifications.url,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => {
      if (text.includes("ready")) resolve(child);
      for (const _ of text.matchAll(/handled /g)) onHandled();
    });
    child.on("exit", (code) => reject(new Error(`the result function exited with ${code} before polling`)));
  });
}

/** Waits until the batch is complete, failing when its counts stop moving for `stallSeconds`. */
async function completed(batchId: string, stallSeconds = 120): Promise<BatchRecord> {
  let last = "";
  let lastChange = Date.now();
  for (;;) {
    const batch = (await batches.getBatch(batchId))!;
    if (isComplete(batch)) return batch;
    const now = JSON.stringify(batch.counts);
    if (now !== last) [last, lastChange] = [now, Date.now()];
    else if (Date.now() - lastChange > stallSeconds * 1000)
      throw new Error(`batch ${batchId} made no progress for ${stallSeconds} s: ${now}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const ticket = (id: string) =>
  JSON.stringify({ id, state: { subject: "charged twice", body: `ticket ${id}: I was charged twice` } });

describe("the async lane on the local services", () => {
  it("decides every item exactly once with its event when the result function is killed mid-way and started again", async () => {
    const ids = Array.from({ length: 60 }, (_, i) => `A-${i}`);
    const batchId = await submit("ticket-routing", "killed", ids.map(ticket));
    let handled = 0;
    const first = await startConsumer(() => handled++);
    // Killed while it works: once it has settled an object and is inside the next ones.
    while (handled < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    first.kill("SIGKILL");
    const decidedAtKill = (await batches.getBatch(batchId))!.counts.decided;
    expect(decidedAtKill).toBeGreaterThan(0);
    expect(decidedAtKill).toBeLessThan(ids.length);
    await startConsumer();
    const batch = await completed(batchId);
    expect(batch.counts).toMatchObject({ accepted: 60, decided: 60, failed: 0, deadLettered: 0 });
    const events = made.filter((e) => ids.includes(e.detail.itemId as string));
    expect(new Set(events.map((e) => e.detail.itemId)).size).toBe(60);
    // An event sent again after the kill is the same event (one id per item), never a second decision.
    for (const id of ids)
      expect(new Set(events.filter((e) => e.detail.itemId === id).map((e) => e.detail.eventId)).size).toBe(1);
  }, 600_000);

  it("fails a malformed answer's item alone, and dead-letters the items of an object that keeps failing, with the reasons", async () => {
    if (children.size === 0) await startConsumer();
    const good = await submit("ticket-routing", "malformed", ["M-1", "M-2", "M-3", "M-4"].map(ticket));
    const doomed = await submit(
      "content-moderation",
      "doomed",
      ["D-1", "D-2", "D-3"].map((id) => JSON.stringify({ id, state: `post ${id}` })),
    );
    expect((await completed(good)).counts).toMatchObject({ accepted: 4, decided: 3, deadLettered: 1 });
    expect((await completed(doomed)).counts).toMatchObject({ accepted: 3, decided: 0, deadLettered: 3 });
    // A receive may return fewer messages than the queue holds: receive until the four are in (or none come).
    const letters: Awaited<ReturnType<NonNullable<typeof wiring.queues.batchDeadLetters>["receive"]>> = [];
    for (let empty = 0; letters.length < 4 && empty < 20; ) {
      const got = await wiring.queues.batchDeadLetters!.receive({ max: 10 });
      letters.push(...got);
      empty = got.length === 0 ? empty + 1 : 0;
    }
    expect(letters.map((l) => (JSON.parse(l.body) as { id: string }).id).sort()).toEqual([
      "D-1",
      "D-2",
      "D-3",
      "M-1",
    ]);
    const store = wiring.baseDeps.store;
    const reasons = await Promise.all(
      letters.map(async (l) => [JSON.parse(l.body).id, (await store.failureOf(l.messageId))?.reason]),
    );
    for (const [id, reason] of reasons) {
      if (id === "M-1") expect(reason).toMatch(/malformed answer.*failure 2 of the item/);
      else expect(reason).toMatch(/failed 3 times: ClientError: Received server error \(500\)/);
    }
  }, 600_000);
});
