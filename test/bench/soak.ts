/**
 * Soak: pushes N items through the local mode (`decide local`, its endpoint a `decide serve` of
 * the demo model) while a fault rotates every few minutes (the endpoint killed, DynamoDB Local
 * paused with SIGSTOP, the local mode itself killed with SIGKILL and started again, a CPU hog),
 * then counts from the records: items lost, decided twice, events missing, and the local mode's
 * resident memory over time. Not run in CI: it takes as long as the items take.
 *
 *   npm run soak -- [--items 100000] [--fault-every 180] [--backlog 2000] [--faults a,b,...]
 *                   [--out test-output/soak.json]
 *
 * `--faults` picks which of the four rotate (default all): leaving out `local-mode-killed` keeps
 * one local mode process for the whole run, to read its memory over a long stretch.
 *
 * Items are sent as an upstream producer would: to the intake queue, ten at a time, never more
 * than --backlog waiting, sent again until the queue accepts them (also while the local mode is
 * down). An item counts as sent once the queue accepted it.
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { stopOrphanedDynamoDb } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { LiveSummary, type LocalSummary } from "../../infra/local/local-summary.ts";
import { ensurePortsFree, resolveLocalPorts } from "../../infra/local/ports.ts";
import { freePort } from "../../infra/local/wiring.ts";
import { documentClient, localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { countSoak } from "./soak-audit.ts";
import {
  decideService,
  dynamoPid,
  exited,
  FAULTS,
  type FaultTargets,
  inject,
  rssMiB,
  sleep,
} from "./soak-processes.ts";

const { values } = parseArgs({
  options: {
    items: { type: "string", default: "100000" },
    "fault-every": { type: "string", default: "180" },
    backlog: { type: "string", default: "2000" },
    faults: { type: "string", default: FAULTS.join(",") },
    out: { type: "string", default: join(REPO_ROOT, "test-output", "soak.json") },
  },
});
const ITEMS = Number(values.items);
const FAULT_EVERY_S = Number(values["fault-every"]);
const BACKLOG = Number(values.backlog);
const ROTATION = values.faults!.split(",").map((name) => {
  const fault = FAULTS.find((f) => f === name.trim());
  if (!fault) throw new Error(`--faults: "${name}" is none of ${FAULTS.join(", ")}`);
  return fault;
});
/** How long each fault lasts, in seconds (the local mode's kill is a restart at once). */
const FAULT_SECONDS = { "endpoint-killed": 20, "dynamodb-paused": 20, "local-mode-killed": 0, "cpu-hog": 60 };
const started = Date.now();
const elapsed = () => Math.round((Date.now() - started) / 1000);
const say = (line: string) => console.log(`[${elapsed()} s] ${line}`);

async function freeBase(): Promise<number> {
  for (;;) {
    const base = Math.min(await freePort(), 65_000);
    if (
      await ensurePortsFree(resolveLocalPorts(base)).then(
        () => true,
        () => false,
      )
    )
      return base;
  }
}

/** Waits until `ready()` holds, or fails when `alive()` says the process died. */
async function waitFor(what: string, ready: () => Promise<boolean>, output: () => string): Promise<void> {
  for (let tries = 0; !(await ready()); tries++) {
    if (tries > 1_800) throw new Error(`${what} not ready after 30 min: ${output().slice(-2000)}`);
    await sleep(1000);
  }
}

const dataDir = await mkdtemp(join(tmpdir(), "soak-"));
const base = await freeBase();
const ports = resolveLocalPorts(base);
const endpointPort = await freePort();
const model = await ensureDemoModel(dataDir, defaultDemoInputs(REPO_ROOT));
const endpoint = decideService("endpoint", [
  "serve",
  "--model",
  model,
  "--port",
  String(endpointPort),
  "--host",
  "127.0.0.1",
]);
const endpointUrl = `http://127.0.0.1:${endpointPort}`;
const endpointReady = () =>
  waitFor(
    "the endpoint",
    () =>
      fetch(`${endpointUrl}/ping`).then(
        (r) => r.ok,
        () => false,
      ),
    () => endpoint.output,
  );
await endpointReady();
const local = decideService("local mode", [
  ...["local", "--no-samples", "--port-base", String(base), "--data-dir", dataDir],
  ...["--endpoint-url", endpointUrl],
]);
const sqs = sqsClient(localServiceOptions(`http://127.0.0.1:${ports.sqs}`));
const queue = (name: string) => new SqsQueue(sqs, `http://127.0.0.1:${ports.sqs}/123456789012/${name}`);
const intake = queue("intake");
const deadLetters = queue("intake-dlq");
const localReady = () =>
  waitFor(
    "the local mode",
    () =>
      intake.depth().then(
        () => true,
        () => false,
      ),
    () => local.output,
  );
await localReady();
say(`soak: ${ITEMS} items, a fault every ${FAULT_EVERY_S} s (${ROTATION.join(", ")}), data in ${dataDir}`);

const store = new DynamoDbDecisionStore(
  documentClient(localServiceOptions(`http://127.0.0.1:${ports.dynamodb}`)),
  "decisions",
);
const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
const counts = await LiveSummary.start({
  store,
  policies,
  now: () => new Date(),
  queues: { intake, deadLetters },
});

const runId = `SOAK-${Date.now().toString(36)}`;
const templates = (await readFile(join(REPO_ROOT, "events", "items", "samples.jsonl"), "utf8"))
  .split("\n")
  .filter(Boolean);
const itemBody = (i: number) => {
  const item = JSON.parse(templates[i % templates.length]!) as { id: string };
  return JSON.stringify({ ...item, id: `${runId}-${i}` });
};

/** Sends every item, ten at a time, keeping the backlog under its bound; retries while the local mode is down. */
const sent = new Set<string>();
async function feed(): Promise<void> {
  for (let i = 0; i < ITEMS; ) {
    const waiting = await intake.depth().then(
      (d) => d.visible,
      () => BACKLOG,
    );
    if (waiting >= BACKLOG) {
      await sleep(1000);
      continue;
    }
    const batch = Array.from({ length: Math.min(10, ITEMS - i) }, (_, j) => ({
      id: `${runId}-${i + j}`,
      body: itemBody(i + j),
    }));
    const failed = await intake
      .sendBatch(batch)
      .catch((error: Error) => batch.map((b) => ({ id: b.id, reason: error.message })));
    if (failed.length > 0) {
      await sleep(1000);
      continue; // the same ten again: an id sent twice is decided once
    }
    for (const b of batch) sent.add(b.id);
    i += batch.length;
  }
}

/** Resident memory and counts every 10 s. */
const samples: {
  t: number;
  localMiB?: number;
  endpointMiB?: number;
  dynamoMiB?: number;
  load: number;
  summary?: LocalSummary;
}[] = [];
let last: LocalSummary | undefined;
const sampler = setInterval(() => {
  void counts.summary().then(
    (s) => {
      last = s;
    },
    () => undefined,
  );
  samples.push({
    t: elapsed(),
    ...(rssMiB(local.child.pid) ? { localMiB: rssMiB(local.child.pid)! } : {}),
    ...(rssMiB(endpoint.child.pid) ? { endpointMiB: rssMiB(endpoint.child.pid)! } : {}),
    ...(rssMiB(dynamoPid(dataDir)) ? { dynamoMiB: rssMiB(dynamoPid(dataDir))! } : {}),
    load: Number(loadavg()[0]!.toFixed(2)),
    ...(last ? { summary: last } : {}),
  });
  if (samples.length % 6 === 0) {
    const s = samples.at(-1)!;
    say(
      `sent ${sent.size}/${ITEMS}, decided ${last?.decided ?? "?"}, rejected ${last?.rejected ?? "?"}, waiting ${last?.waiting ?? "?"}, in DLQ ${last?.deadLetters ?? "?"}; local mode ${s.localMiB ?? "-"} MiB, load ${s.load}`,
    );
  }
}, 10_000);

/** Rotates the faults until `feeding` ends and everything sent is decided. */
const targets: FaultTargets = { endpoint, local, dataDir, endpointReady, localReady, say };
const faults: { t: number; fault: string; seconds: number }[] = [];
let settled = false;
const rotation = (async () => {
  for (let n = 0; !settled; n++) {
    for (let waited = 0; waited < FAULT_EVERY_S && !settled; waited++) await sleep(1000);
    if (settled) return;
    const fault = ROTATION[n % ROTATION.length]!;
    const t = elapsed();
    say(`fault: ${fault}`);
    await inject(fault, targets, FAULT_SECONDS[fault]);
    faults.push({ t, fault, seconds: elapsed() - t });
    say(`fault over: ${fault} (${elapsed() - t} s)`);
  }
})();

await feed();
say(`all ${sent.size} items sent; waiting until each is decided and its effect applied`);
const everythingDone = async () => {
  const s = await counts.summary().catch(() => undefined);
  // In flight counts too: a message whose effects a fault cut off comes back when its visibility lapses.
  const inFlight = await intake.depth().then(
    (d) => d.inFlight,
    () => 1,
  );
  return (
    s !== undefined &&
    s.decided + s.rejected >= sent.size &&
    s.waiting === 0 &&
    inFlight === 0 &&
    s.deadLetters === 0
  );
};
for (let replays = 0; !(await everythingDone()); ) {
  await sleep(10_000);
  // Dead letters (an item that failed five times while a fault lasted) go back, as an operator would send them.
  const letters = await deadLetters.depth().then(
    (d) => d.visible,
    () => 0,
  );
  if (
    letters > 0 &&
    (await intake.depth().then(
      (d) => d.visible,
      () => 1,
    )) === 0
  ) {
    replays++;
    say(`replaying ${letters} dead letters (replay ${replays})`);
    await runDecide(["replay", "--from", "intake"], {
      DEAD_LETTER_ROUTES: JSON.stringify({ intake: { dlqUrl: deadLetters.url, queueUrl: intake.url } }),
      AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${ports.sqs}`,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      DECISIONS_TABLE: "decisions",
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${ports.dynamodb}`,
    });
  }
}
settled = true;
await rotation;
// Effects (actions, review tasks, events under a lapsed publish lease) follow their decisions:
// counted again until nothing is missing, or until the missing count has not fallen for 3 minutes.
let count = await countSoak(store, policies.ids(), `${runId}-`, sent);
for (let still = 0; count.eventsMissing > 0 && still < 12; ) {
  await sleep(15_000);
  const again = await countSoak(store, policies.ids(), `${runId}-`, sent);
  still = again.eventsMissing < count.eventsMissing ? 0 : still + 1;
  say(`${again.eventsMissing} records still owe an event or effect`);
  count = again;
}
clearInterval(sampler);

process.kill(-local.child.pid!, "SIGINT");
await exited(local.child);
process.kill(-endpoint.child.pid!, "SIGTERM");
await exited(endpoint.child);
await stopOrphanedDynamoDb(join(dataDir, "dynamodb"));
sqs.destroy();

const local_ = samples.map((s) => s.localMiB).filter((m): m is number => m !== undefined);
const seconds = elapsed();
const result = {
  command: `npm run soak -- --items ${ITEMS} --fault-every ${FAULT_EVERY_S} --backlog ${BACKLOG}${ROTATION.length < FAULTS.length ? ` --faults ${ROTATION.join(",")}` : ""}`,
  seconds,
  itemsPerSecond: Number((sent.size / seconds).toFixed(2)),
  count,
  faults,
  localModeRssMiB: {
    first: local_[0],
    min: Math.min(...local_),
    max: Math.max(...local_),
    last: local_.at(-1),
  },
  loadAverage: { min: Math.min(...samples.map((s) => s.load)), max: Math.max(...samples.map((s) => s.load)) },
  samples,
};
await mkdir(dirname(values.out!), { recursive: true });
await writeFile(values.out!, JSON.stringify(result, null, 2));
console.log(
  [
    `soak: ${count.sent} items in ${seconds} s (${result.itemsPerSecond}/s), ${faults.length} faults (${faults.map((f) => f.fault).join(", ")})`,
    `lost ${count.lost}, decided twice ${count.decidedTwice}, events missing ${count.eventsMissing} (auto ${count.auto}, human ${count.human}, rejected ${count.rejected})`,
    `local mode RSS: first ${result.localModeRssMiB.first} MiB, min ${result.localModeRssMiB.min}, max ${result.localModeRssMiB.max}, last ${result.localModeRssMiB.last} (it restarts with each kill)`,
    `load average ${result.loadAverage.min}-${result.loadAverage.max}; samples in ${values.out}`,
    ...Object.entries(count.examples).flatMap(([k, v]) => (v.length ? [`${k}: ${v.join("; ")}`] : [])),
  ].join("\n"),
);
process.exit(count.lost + count.decidedTwice + count.eventsMissing === 0 ? 0 : 1);
