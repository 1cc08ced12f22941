/**
 * Batch benchmark (`npm run bench:batch`), two parts:
 *
 * 1. Intake: a 2,000-line and a 20,000-line file read from a folder (the local stand-in for the
 *    bucket), validated and queued on local SQS (in a child process) in batches of 10; lines per
 *    second and the peak of resident and heap memory above where each run started (sampled every
 *    10 ms), to show how memory grows with the file.
 * 3. The endpoint alone (the one part live and batch traffic share when deployed): a live System
 *    One call's latency idle, beside a flood of batch requests marked priority=batch, and beside
 *    the same flood unmarked.
 * 2. Live traffic beside a batch, in the local mode on the demo model: the time from sending a
 *    live item to the intake queue until its decision is stored, idle, then while a batch runs
 *    through the batch lane, then while the same number of items is sent to the intake queue
 *    the old way (`decide publish`, no batch lane, no priority). Medians and 90th percentiles.
 *
 * Flags: --batch-items N (default 600), --probes N (default 12), --batch-pollers N (default 2, the
 * deployed lane's concurrency), --part 1|2|3 (one part only), --shape demo|qwen2-0.5b (part 3's model).
 */

import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { isModelShapeName } from "../../endpoint/models/shapes.ts";
import { startLocalMode } from "../../infra/local/local-mode.ts";
import { freePort } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { benchModelPath, fmt, machineLine, median } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    "batch-items": { type: "string", default: "600" },
    probes: { type: "string", default: "12" },
    "batch-pollers": { type: "string", default: "2" },
    part: { type: "string" },
    shape: { type: "string", default: "demo" },
  },
});
const batchItems = Number(flags["batch-items"]);
const probes = Number(flags.probes);
const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
const subjects = [
  "charged twice",
  "app crashes on start",
  "cannot log in",
  "refund please",
  "error 500 on save",
];
const line = (prefix: string, n: number) =>
  JSON.stringify({
    id: `${prefix}-${n}`,
    state: { subject: subjects[n % 5], body: `ticket ${n}: ${subjects[(n * 3) % 5]} since yesterday` },
  });

console.log("\n# batch benchmark");
console.log(machineLine());

// 1. Intake rate and memory.
const runs = (part: string) => flags.part === undefined || flags.part === part;
if (runs("1")) {
  const folder = await mkdtemp(join(tmpdir(), "bench-intake-"));
  const objects = new FsObjectStore(folder);
  // Local SQS in a child process: it keeps every message in memory, which must not count as the intake's.
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { createSqsServer } from "local-aws-sqs"; await createSqsServer({ port: ${port}, hostname: "127.0.0.1" }); console.log("ready");`,
    ],
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`local SQS exited with ${code}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const sqs = sqsClient(localServiceOptions(endpoint));
  console.log("\n1. intake (folder -> validate -> local SQS in batches of 10):");
  for (const lines of [2_000, 20_000]) {
    const queue = await SqsQueue.create(sqs, `intake-${lines}`, {});
    const key = `incoming/ticket-routing/tickets-${lines}.jsonl`;
    await objects.put(key, `${Array.from({ length: lines }, (_, i) => line("I", i + 1)).join("\n")}\n`);
    globalThis.gc?.();
    const base = process.memoryUsage();
    let peakRss = base.rss;
    let peakHeap = base.heapUsed;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakRss = Math.max(peakRss, now.rss);
      peakHeap = Math.max(peakHeap, now.heapUsed);
    }, 10);
    const started = performance.now();
    const batch = await runIntake(
      {
        batches: new InMemoryBatchStore(),
        objects,
        files: { request: async () => {} },
        policies,
        queue,
        now: () => new Date(),
      },
      key,
    );
    const ms = performance.now() - started;
    clearInterval(sampler);
    globalThis.gc?.();
    const retained = process.memoryUsage().heapUsed - base.heapUsed;
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    console.log(
      `   ${lines} lines: ${fmt(ms)}, ${((batch.counts.accepted / ms) * 1000).toFixed(0)} lines/s; peak above start: RSS +${mib(peakRss - base.rss)}, heap +${mib(peakHeap - base.heapUsed)} (garbage included); heap still held after a GC: ${mib(retained)}`,
    );
  }
  sqs.destroy();
  child.kill();
}

// 2. Live latency beside a batch.
if (runs("2")) {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-batch-"));
  const local = await startLocalMode({
    root: REPO_ROOT,
    dataDir,
    fresh: true,
    ports: { endpoint: 0, sqs: 0, dynamodb: 0, bus: 0, review: 0 },
    batchPollers: Number(flags["batch-pollers"]),
  });
  try {
    const client = documentClient(localServiceOptions(local.env.AWS_ENDPOINT_URL_DYNAMODB!));
    const records = new DynamoDbDecisionStore(client, "decisions");
    const batches = new DynamoDbBatchStore(client, "decisions");
    const sqs = sqsClient(localServiceOptions(local.env.AWS_ENDPOINT_URL_SQS!));
    const intake = new SqsQueue(sqs, local.intakeUrl);
    const batchQueue = new SqsQueue(sqs, local.env.BATCH_QUEUE_URL!);
    let probeNumber = 0;
    /** Sends one live item and waits for its record; the milliseconds in between. */
    const probe = async (): Promise<number> => {
      const id = `LIVE-${++probeNumber}`;
      const started = performance.now();
      await intake.send(
        JSON.stringify({
          id,
          policy: "ticket-routing",
          state: { subject: "charged twice", body: "please refund the extra charge" },
        }),
      );
      while (!(await records.get({ itemId: id, policyId: "ticket-routing", policyVersion: 1 })))
        await new Promise((resolve) => setTimeout(resolve, 10));
      return performance.now() - started;
    };
    const series = async (busy: () => Promise<boolean>) => {
      const out: number[] = [];
      for (let i = 0; i < probes && (await busy()); i++) {
        out.push(await probe());
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      return out;
    };
    const p90 = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)] ?? Number.NaN;
    const describe = (name: string, values: number[], idle?: number) =>
      `   ${name}: median ${fmt(median(values))}, p90 ${fmt(p90(values))} over ${values.length} live items${idle ? `, ${(median(values) / idle).toFixed(2)}x idle` : ""}`;

    for (let i = 0; i < 3; i++) await probe(); // warm-up
    const idle = await series(async () => true);
    const idleMedian = median(idle);

    // A batch on the batch lane (what decide batch submit does).
    const objects = new FsObjectStore(local.env.BATCH_FOLDER!);
    const key = `incoming/ticket-routing/b-bench-${Date.now()}/tickets.jsonl`;
    await objects.put(key, `${Array.from({ length: batchItems }, (_, i) => line("B", i + 1)).join("\n")}\n`);
    const { queueBatchFiles } = await import("../../shared/use-cases/batch-files.ts");
    const files = queueBatchFiles(new SqsQueue(sqs, local.env.BATCH_FILES_QUEUE_URL!));
    const lane = await runIntake(
      { batches, objects, files, policies, queue: batchQueue, now: () => new Date() },
      key,
    );
    const laneStarted = performance.now();
    const beside = await series(async () => (await batches.getBatch(lane.batchId))!.status !== "completed");
    while ((await batches.getBatch(lane.batchId))!.status !== "completed")
      await new Promise((r) => setTimeout(r, 200));
    const laneRate = (batchItems / (performance.now() - laneStarted)) * 1000;

    // The same number of items sent to the intake queue, the old fire-and-forget way.
    const bodies = Array.from(
      { length: batchItems },
      (_, i) => JSON.parse(line("P", i + 1)) as Record<string, unknown>,
    );
    for (let i = 0; i < bodies.length; i += 10)
      await intake.sendBatch(
        bodies
          .slice(i, i + 10)
          .map((b, j) => ({ id: String(j), body: JSON.stringify({ ...b, policy: "ticket-routing" }) })),
      );
    const decidedOld = async () =>
      (await records.get({ itemId: `P-${batchItems}`, policyId: "ticket-routing", policyVersion: 1 })) ===
      undefined;
    const old = await series(decidedOld);

    console.log(`\n2. live latency (send to stored decision), demo model, batch of ${batchItems} items:`);
    console.log(describe("idle", idle));
    console.log(
      describe(
        `beside a batch on the batch lane (priority=batch, ${flags["batch-pollers"]} pollers)`,
        beside,
        idleMedian,
      ),
    );
    console.log(describe("beside the same items sent to the intake queue (no lane)", old, idleMedian));
    console.log(`   batch lane throughput while live items ran: ${laneRate.toFixed(1)} items/s`);
    sqs.destroy();
  } finally {
    await local.stop();
  }
}

// 3. The endpoint alone: live calls beside a flood of batch calls, with and without priority.
if (runs("3")) {
  const { startServer } = await import("../../endpoint/server/server.ts");
  const { resolveServerConfig } = await import("../../endpoint/server/config.ts");
  const { ensureDemoModel, defaultDemoInputs } = await import("../../endpoint/models/demo-file.ts");
  const { Logger } = await import("@aws-lambda-powertools/logger");
  const dataDir = await mkdtemp(join(tmpdir(), "bench-endpoint-"));
  const shape = flags.shape!;
  if (shape !== "demo" && !isModelShapeName(shape)) throw new Error(`unknown --shape ${shape}`);
  const model =
    shape === "demo"
      ? await ensureDemoModel(dataDir, defaultDemoInputs(REPO_ROOT))
      : await benchModelPath(shape);
  const server = await startServer(
    resolveServerConfig({ model, port: "0", gpu: "off", "queue-size": "256" }, {}),
    {
      logger: new Logger({ serviceName: "bench", logLevel: "ERROR" }),
    },
  );
  await server.service.ready;
  const url = `${server.url}/endpoints/decisions/invocations`;
  const policy = policies.current("ticket-routing")!;
  const { systemOneRequest } = await import("../../shared/domain/contracts/system-one/index.ts");
  const request = (n: number) =>
    systemOneRequest({ id: `E-${n}`, policy: policy.id, state: JSON.parse(line("E", n)).state }, policy);
  const call = async (body: unknown, batch: boolean) => {
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(batch ? { "x-amzn-sagemaker-custom-attributes": "priority=batch" } : {}),
      },
      body: JSON.stringify(body),
    });
    await response.text();
    return performance.now() - started;
  };
  const live = async () => {
    const out: number[] = [];
    for (let i = 0; i < probes * 2; i++) {
      out.push(await call(request(i), false));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return out;
  };
  /** Two clients sending batches of 10 items back to back while `during` runs. */
  const flood = async <T>(marked: boolean, during: () => Promise<T>): Promise<T> => {
    let running = true;
    const client = async () => {
      let n = 0;
      while (running) await call({ batch: Array.from({ length: 10 }, () => request(n++)) }, marked);
    };
    const clients = [client(), client()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    try {
      return await during();
    } finally {
      running = false;
      await Promise.all(clients);
    }
  };
  for (let i = 0; i < 5; i++) await call(request(i), false); // warm-up
  const idle = await live();
  const withPriority = await flood(true, live);
  const without = await flood(false, live);
  const idleMedian = median(idle);
  const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!;
  console.log(
    `\n3. the endpoint alone, ${shape} model: live call latency beside two clients sending batches of 10:`,
  );
  for (const [name, values] of [
    ["idle", idle],
    ["beside batches marked priority=batch", withPriority],
    ["beside the same batches unmarked", without],
  ] as const)
    console.log(
      `   ${name}: median ${fmt(median(values))}, p90 ${fmt(p90(values))} over ${values.length} calls, ${(median(values) / idleMedian).toFixed(2)}x idle`,
    );
  await server.close();
}
