/**
 * `decide batch`: async batch moderation as a job. `submit` stores the file under
 * `incoming/<policy>/<batch id>/` (the pipeline bucket deployed, where the intake function picks
 * it up; the local mode's folder locally, where this command runs the same intake itself) and
 * follows the batch to the end; `status` shows its exact counts with a progress bar, rate and ETA;
 * `results` writes its results (and errors) file; `list` shows recent batches. AWS CLI
 * conventions: --region, --profile; the table and the bucket or folder from flags or from
 * DECISIONS_TABLE, BATCH_BUCKET / BATCH_FOLDER, BATCH_QUEUE_URL and BATCH_FILES_QUEUE_URL (which
 * `npm start` prints).
 */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { sleep } from "../shared/domain/backoff.ts";
import type { BatchRecord } from "../shared/domain/batch.ts";
import type { ObjectStore } from "../shared/domain/object-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { queueBatchFiles } from "../shared/use-cases/batch-files.ts";
import { runIntake } from "../shared/use-cases/batch-intake.ts";
import { batchKeys } from "../shared/use-cases/batch-progress.ts";
import { CommandError, integerFlag, requiredFlag, UsageError } from "./args.ts";
import { awsOptions, batchFiles, batchStore, queueAt } from "./aws.ts";

export const batchUsage = `decide batch submit <file.jsonl | file.csv> --policy ID [--no-wait]
decide batch status <batch id> [--watch]
decide batch results <batch id> --out results.jsonl [--errors errors.jsonl]
decide batch list [--limit 20]
  common: [--table NAME] [--bucket NAME | --folder DIR] [--queue-url URL] [--region R] [--profile P]

submit: each line an item ({"id", "state"}; "policy" may be left out); CSV with a header id,state
(other columns become metadata). Deployed (--bucket, or BATCH_BUCKET) the file goes to the bucket
and the intake function reads it; locally (BATCH_FOLDER, BATCH_QUEUE_URL and BATCH_FILES_QUEUE_URL from
\`npm start\`) this command reads it. Refused lines are listed with their line numbers in the errors file.
Then the batch is followed until every item is decided (--no-wait returns at once with its id).`;

interface Flags {
  table?: string | undefined;
  bucket?: string | undefined;
  folder?: string | undefined;
  "queue-url"?: string | undefined;
  region?: string | undefined;
  profile?: string | undefined;
}

function context(values: Flags) {
  const aws = awsOptions(values);
  const table = requiredFlag("table", values.table ?? process.env.DECISIONS_TABLE);
  const bucket = values.bucket ?? process.env.BATCH_BUCKET;
  const folder = values.folder ?? process.env.BATCH_FOLDER;
  if (!bucket && !folder)
    throw new UsageError(
      "no batch files: give --bucket NAME (deployed) or --folder DIR (local), or export BATCH_BUCKET / BATCH_FOLDER as `npm start` prints",
    );
  return {
    aws,
    table,
    bucket,
    folder,
    batches: batchStore(table, aws),
    objects: batchFiles({ bucket, folder }, aws),
  };
}

/** Runs the command; returns the exit code. */
export async function batchCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      policy: { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
      "no-wait": { type: "boolean", default: false },
      watch: { type: "boolean", default: false },
      out: { type: "string" },
      errors: { type: "string" },
      limit: { type: "string" },
      table: { type: "string" },
      bucket: { type: "string" },
      folder: { type: "string" },
      "queue-url": { type: "string" },
      region: { type: "string" },
      profile: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const argument = (what: string) => {
    if (!positionals[0]) throw new UsageError(`give the ${what}: decide batch ${sub} <${what}>`);
    return positionals[0];
  };
  if (sub === "submit") return submit(argument("file"), values);
  if (sub === "status") return status(argument("batch id"), values.watch ?? false, values);
  if (sub === "results") return results(argument("batch id"), values);
  if (sub === "list") return list(integerFlag("limit", values.limit, 20, 1, 1000), values);
  throw new UsageError(
    sub
      ? `unknown batch command "${sub}" (submit, status, results, list)`
      : "give a batch command: submit, status, results or list",
  );
}

async function submit(
  file: string,
  values: Flags & {
    policy?: string | undefined;
    "policies-dir"?: string | undefined;
    "no-wait"?: boolean | undefined;
  },
): Promise<number> {
  const policyId = requiredFlag("policy", values.policy);
  const registry = await PolicyRegistry.fromFolder(values["policies-dir"] ?? "events/policies");
  if (!registry.current(policyId))
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  const body = await readFile(file).catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  });
  const ctx = context(values);
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15).toLowerCase();
  const batchId = `b-${stamp}-${randomBytes(3).toString("hex")}`;
  const key = `incoming/${policyId}/${batchId}/${basename(file)}`;
  await ctx.objects.put(key, body);
  console.log(`batch ${batchId}: ${file} stored as ${key}`);
  if (!ctx.bucket) {
    // Locally this command is the intake function: it reads the file from the folder and queues it.
    const queueUrl = requiredFlag("queue-url", values["queue-url"] ?? process.env.BATCH_QUEUE_URL);
    const filesUrl = process.env.BATCH_FILES_QUEUE_URL;
    if (!filesUrl)
      throw new UsageError("BATCH_FILES_QUEUE_URL is not set: export the variables `npm start` printed");
    const batch = await runIntake(
      {
        batches: ctx.batches,
        objects: ctx.objects,
        files: queueBatchFiles(queueAt(filesUrl, ctx.aws)),
        policies: registry,
        queue: queueAt(queueUrl, ctx.aws),
      },
      key,
    );
    console.log(
      `read ${batch.counts.lines} lines: ${batch.counts.accepted} queued, ${batch.counts.rejected} refused (listed in the errors file)`,
    );
  }
  if (values["no-wait"]) {
    console.log(`follow it with: npx decide batch status ${batchId} --watch`);
    return 0;
  }
  return status(batchId, true, values);
}

/** One line of progress: the bar, the counts, rate and ETA. */
function progressLine(batch: BatchRecord, rate: number): string {
  const c = batch.counts;
  const done = c.decided + c.failed + c.deadLettered;
  const share = c.accepted ? done / c.accepted : batch.status === "submitting" ? 0 : 1;
  const width = 24;
  const bar = `[${"#".repeat(Math.round(share * width))}${"-".repeat(width - Math.round(share * width))}]`;
  const eta = rate > 0 && c.accepted > done ? `, ETA ${Math.round((c.accepted - done) / rate)} s` : "";
  return `${bar} ${done}/${c.accepted}${batch.status === "submitting" ? "+" : ""} decided ${c.decided} (auto ${c.auto}, human ${c.human}, reviewed ${c.reviewed}), refused at intake ${c.rejected}, failed ${c.failed}, dead letters ${c.deadLettered}; ${rate.toFixed(1)}/s${eta}`;
}

async function status(batchId: string, watch: boolean, values: Flags): Promise<number> {
  const ctx = context(values);
  let batch = await ctx.batches.getBatch(batchId);
  if (!batch)
    throw new CommandError(`no batch ${batchId} in ${ctx.table} (decide batch list shows the recent ones)`);
  const started = performance.now();
  const first = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
  let last = "";
  while (watch && batch.status !== "completed") {
    const done = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
    const rate = (done - first) / Math.max((performance.now() - started) / 1000, 1e-3);
    const line = progressLine(batch, rate);
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else if (line.split(";")[0] !== last) process.stderr.write(`${line}\n`);
    last = line.split(";")[0]!;
    await sleep(1000);
    batch = (await ctx.batches.getBatch(batchId)) ?? batch;
  }
  if (process.stderr.isTTY && watch) process.stderr.write("\n");
  console.log(`batch ${batch.batchId} (${batch.policyId}, ${batch.source}): ${batch.status}`);
  console.log(`  ${progressLine(batch, 0).replace(/; 0\.0\/s$/, "")}`);
  if (batch.status === "completed")
    console.log(
      `  results: npx decide batch results ${batch.batchId} --out ${batch.batchId}.results.jsonl --errors ${batch.batchId}.errors.jsonl`,
    );
  return 0;
}

async function results(
  batchId: string,
  values: Flags & { out?: string | undefined; errors?: string | undefined },
): Promise<number> {
  const out = requiredFlag("out", values.out);
  const ctx = context(values);
  const batch = await ctx.batches.getBatch(batchId);
  if (!batch) throw new CommandError(`no batch ${batchId} in ${ctx.table}`);
  if (batch.status !== "completed")
    throw new CommandError(
      `batch ${batchId} is ${batch.status}: its results are written when every item is decided`,
    );
  const keys = batchKeys(batchId);
  console.log(`wrote ${out}: ${await download(ctx.objects, keys.results, out)} results`);
  if (values.errors)
    console.log(`wrote ${values.errors}: ${await download(ctx.objects, keys.errors, values.errors)} errors`);
  return 0;
}

/** Streams an object into a file (a results file may be larger than memory); returns its lines. */
async function download(objects: ObjectStore, key: string, path: string): Promise<number> {
  const body = await objects.read(key);
  let lines = 0;
  async function* counted() {
    for await (const chunk of body ?? []) {
      for (const byte of chunk) if (byte === 10) lines++;
      yield chunk;
    }
  }
  await pipeline(Readable.from(counted()), createWriteStream(path));
  return lines;
}

async function list(limit: number, values: Flags): Promise<number> {
  const ctx = context(values);
  const batches = await ctx.batches.listBatches(limit);
  if (batches.length === 0) console.log("no batches yet");
  for (const b of batches) {
    const c = b.counts;
    console.log(
      `${b.batchId}  ${b.createdAt}  ${b.policyId}  ${b.status}  ${c.decided + c.failed + c.deadLettered}/${c.accepted} done, ${c.rejected} refused  ${b.source}`,
    );
  }
  return 0;
}
