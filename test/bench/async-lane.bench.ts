/**
 * The batch lane two ways, same run (`npm run bench:async`): one batch of N items (default
 * 10,000) through the local async lane (submit function, the async endpoint's stand-in, JSONL
 * objects, result function), then the same batch through the real-time lane (the decide function
 * on the batch queue, batched InvokeEndpoint calls). Each lane gets a fresh container in a process
 * of its own (`decide serve`, the same model), so its peak resident memory (VmHWM) is the
 * container's alone. Prints items/s from submission to the batch's completion, and the peak.
 *
 * Flags: --items N (default 10000), --model FILE (default the generated tiny test model),
 * --lanes async,realtime (the order they run in).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, startLocalWiring } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { isComplete } from "../../shared/domain/batch.ts";
import { capacityPlan } from "../../shared/domain/capacity-plan.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_QUEUES } from "../../shared/domain/topology.ts";
import { queueBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { generatedModel, REPO_ROOT } from "../helpers/models.ts";
import { machineLine } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    items: { type: "string", default: "10000" },
    model: { type: "string" },
    lanes: { type: "string", default: "async,realtime" },
  },
});
const items = Number(flags.items);
const model = flags.model ?? (await generatedModel());
const subjects = [
  "charged twice",
  "app crashes on start",
  "cannot log in",
  "refund please",
  "error 500 on save",
];
const lines = Array.from({ length: items }, (_, n) =>
  JSON.stringify({
    id: `L-${n}`,
    state: { subject: subjects[n % 5], body: `ticket ${n}: ${subjects[(n * 3) % 5]}` },
  }),
);

/** Starts `decide serve` in a process of its own, sized as the local mode sizes one instance. */
async function startContainer(): Promise<{ url: string; child: ChildProcess; peakMiB: () => number }> {
  const port = await freePort();
  const plan = capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 1 });
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, "bin/decide.js"),
      "serve",
      "--model",
      model,
      "--port",
      String(port),
      "--gpu",
      "off",
      "--queue-size",
      String(plan.queueSize),
      "--deadline-ms",
      String(plan.deadlineMs),
      "--log-level",
      "ERROR",
    ],
    { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    const ready = await fetch(`${url}/ping`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) break;
    if (child.exitCode !== null) throw new Error(`decide serve exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const peakMiB = () => {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
    return Number(kib) / 1024;
  };
  return { url, child, peakMiB };
}

/** One batch of the items through `lane`: items/s from submission to completion, and the container's peak. */
async function runLane(lane: "async" | "realtime"): Promise<{ seconds: number; peakMiB: number }> {
  const container = await startContainer();
  const folder = await mkdtemp(join(tmpdir(), `bench-${lane}-`));
  const plan = capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 1 });
  const wiring = await startLocalWiring({
    endpointUrl: container.url,
    root: REPO_ROOT,
    ports: { dynamodb: 0, sqs: 0, bus: 0 },
    intake: { visibilitySeconds: 120, maxItemFailures: DECIDE_QUEUES.maxItemFailures, maxReceiveCount: 1000 },
    batchFolder: folder,
    batchLane: lane,
    batchPollers: plan.batch,
    decideBatchSize: plan.batchSize,
    asyncLane: { resultsVisibilitySeconds: 900 },
    started: [],
  });
  try {
    const objects = new FsObjectStore(folder);
    const key = `incoming/ticket-routing/b-bench-${lane}/items.jsonl`;
    await objects.put(key, `${lines.join("\n")}\n`);
    const batches = new DynamoDbBatchStore(
      documentClient(localServiceOptions(wiring.env.AWS_ENDPOINT_URL_DYNAMODB!)),
      wiring.env.DECISIONS_TABLE!,
    );
    const started = performance.now();
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
    let last = -1;
    for (;;) {
      const now = (await batches.getBatch(batch.batchId))!;
      if (isComplete(now)) break;
      if (now.counts.decided !== last && now.counts.decided % 1000 < 50)
        console.error(
          `  ${lane}: ${now.counts.decided} decided after ${((performance.now() - started) / 1000).toFixed(0)} s`,
        );
      last = now.counts.decided;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return { seconds: (performance.now() - started) / 1000, peakMiB: container.peakMiB() };
  } finally {
    await wiring.stop();
    container.child.kill("SIGTERM");
    await rm(folder, { recursive: true, force: true });
  }
}

console.log("\n# batch lanes: async (objects) vs real-time (batched calls), same run");
console.log(
  `${machineLine()}; load average at start ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
console.log(`model: ${model}; ${items.toLocaleString("en")} items of one policy (ticket-routing)`);
console.log("\n| lane | seconds | items/s | container peak RSS |");
console.log("|---|---|---|---|");
for (const lane of flags.lanes.split(",") as ("async" | "realtime")[]) {
  const { seconds, peakMiB } = await runLane(lane);
  console.log(
    `| ${lane} | ${seconds.toFixed(0)} | ${(items / seconds).toFixed(1)} | ${peakMiB.toFixed(0)} MiB |`,
  );
}
console.log(
  `load average at end ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
