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
import { systemClock } from "../shared/domain/clock.ts";
import { MAX_LINE_BYTES, readLines } from "../shared/domain/input/lines.ts";
import type { ItemProblem } from "../shared/domain/item.ts";
import type { ObjectStore } from "../shared/domain/object-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { queueBatchFiles } from "../shared/use-cases/batch-files.ts";
import { runIntake } from "../shared/use-cases/batch-intake.ts";
import { batchKeys } from "../shared/use-cases/batch-progress.ts";
import { CommandError, integerFlag, requiredFlag, START_HINT, settingFrom, UsageError } from "./args.ts";
import { queueAt } from "./aws.ts";
import { context, type Flags } from "./batch-context.ts";
import { status } from "./batch-status.ts";
import { exitCodeFor, refusedLineText } from "./terminal.ts";

export const batchUsage = `decide batch submit <file.jsonl | file.csv> --policy ID [--no-wait]
decide batch status <batch id> [--watch]
decide batch results <batch id> --out results.jsonl [--errors errors.jsonl]
decide batch list [--limit 20]
  common: [--table NAME] [--bucket NAME | --folder DIR] [--queue-url URL] [--region R] [--profile P]
  (the table, folder and queues default to DECISIONS_TABLE, BATCH_BUCKET or BATCH_FOLDER,
  BATCH_QUEUE_URL and BATCH_FILES_QUEUE_URL, as \`npm start\` exports them)

submit: each line an item ({"id", "state"}; "policy" may be left out); CSV with a header id,state
(other columns become metadata); UTF-8, at most ${MAX_LINE_BYTES} bytes a line. Deployed (--bucket,
or BATCH_BUCKET) the file goes to the bucket and the intake function reads it; locally (BATCH_FOLDER)
this command reads it, once the table and the queue answer. Refused lines are listed with their
line numbers (as \`decide publish\` lists them; also in the errors file), and the exit code is 1
when there were some. Then the batch is followed until every item is decided (--no-wait returns at
once with its id; Ctrl-C stops following, not the batch).`;

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
  // Locally this command is the intake function: it reads the file from the folder and queues it.
  const local = ctx.bucket
    ? undefined
    : {
        queue: queueAt(settingFrom("queue-url", values["queue-url"], "BATCH_QUEUE_URL"), ctx.aws),
        files: queueBatchFiles(queueAt(batchFilesQueueUrl(), ctx.aws)),
      };
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15).toLowerCase();
  const batchId = `b-${stamp}-${randomBytes(3).toString("hex")}`;
  const key = `incoming/${policyId}/${batchId}/${basename(file)}`;
  // The services first: a file stored while they are down would be a batch nobody knows of.
  await ctx.batches.getBatch(batchId);
  await local?.queue.depth();
  await ctx.objects.put(key, body);
  console.log(`batch ${batchId}: ${file} stored as ${key}`);
  let refused = 0;
  const listRefused = async () => {
    refused = await printRefused(ctx.objects, batchId);
  };
  if (local) {
    const batch = await runIntake(
      { batches: ctx.batches, objects: ctx.objects, policies: registry, now: systemClock, ...local },
      key,
    ).catch(async (error: unknown) => {
      // Without its batch record no one would ever read the file again: take it back.
      if (!(await ctx.batches.getBatch(batchId).catch(() => undefined)))
        await ctx.objects.delete(key).catch(() => undefined);
      throw error;
    });
    await listRefused();
    console.log(
      `read ${batch.counts.lines} lines: ${batch.counts.accepted} queued, ${batch.counts.rejected} refused`,
    );
  }
  if (values["no-wait"]) {
    console.log(`follow it with: npx decide batch status ${batchId} --watch`);
    return exitCodeFor(refused);
  }
  const code = await status(batchId, true, values, {
    waitForBatch: true,
    ...(local ? {} : { onIntakeDone: listRefused }),
  });
  return code === 0 ? exitCodeFor(refused) : code;
}

/** Prints the lines intake refused, as `decide publish` does; returns how many. */
async function printRefused(objects: ObjectStore, batchId: string): Promise<number> {
  const stream = await objects.read(batchKeys(batchId).rejected);
  let count = 0;
  for await (const line of stream ? readLines(stream) : []) {
    if (!line.text?.trim()) continue;
    const refused = JSON.parse(line.text) as { line: number; problems: ItemProblem[] };
    console.error(refusedLineText(refused.line, refused.problems));
    count++;
  }
  return count;
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

/** The local mode's batch files queue (`npm start` exports it; deployed, the intake function has its own). */
function batchFilesQueueUrl(): string {
  const url = process.env.BATCH_FILES_QUEUE_URL;
  if (!url) throw new UsageError(`BATCH_FILES_QUEUE_URL is not set: ${START_HINT}`);
  return url;
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
