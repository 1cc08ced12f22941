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
import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import type { BatchRecord } from "../../shared/domain/batch.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { MAX_LINE_BYTES } from "../../shared/domain/input/lines.ts";
import type { ObjectStore } from "../../shared/domain/object-store.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { CommandError, integerFlag, requiredFlag, START_HINT, settingFrom, UsageError } from "../args.ts";
import type { CommandEnv, CommandIo, OneShotCommand, Printed } from "../command.ts";
import { onTerminal, slowStep } from "../terminal/slow-step.ts";
import { exitCodeFor } from "../terminal/terminal.ts";
import { type BatchWhere, batchWhere, context } from "./batch-context.ts";
import { type BatchFollowed, followBatch, printFollowed } from "./batch-status.ts";
import { type SubmitOptions, type Submitted, submit } from "./batch-submit.ts";

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

/** What `decide batch` was asked: one of its four subcommands. */
type BatchOptions =
  | ({ readonly sub: "submit" } & SubmitOptions)
  | { readonly sub: "status"; readonly batchId: string; readonly watch: boolean; readonly where: BatchWhere }
  | {
      readonly sub: "results";
      readonly batchId: string;
      readonly out: string;
      readonly errors: string | undefined;
      readonly where: BatchWhere;
    }
  | { readonly sub: "list"; readonly limit: number; readonly where: BatchWhere };

/** What each subcommand found. */
type BatchResult =
  | ({ readonly sub: "submit" } & Submitted)
  | ({ readonly sub: "status" } & { readonly followed: BatchFollowed })
  | {
      readonly sub: "results";
      readonly out: string;
      readonly results: number;
      readonly errors: { readonly path: string; readonly lines: number } | undefined;
    }
  | { readonly sub: "list"; readonly batches: BatchRecord[] };

function parse(argv: string[], env: CommandEnv): BatchOptions {
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
  if (sub === "submit") {
    const file = argument("file");
    const policyId = requiredFlag("policy", values.policy);
    const where = batchWhere(values, env);
    const local = where.bucket
      ? undefined
      : {
          queueUrl: settingFrom("queue-url", values["queue-url"], FUNCTION_ENV.BATCH_QUEUE_URL, env),
          filesQueueUrl: batchFilesQueueUrl(env),
        };
    const policiesDir = values["policies-dir"] ?? "events/policies";
    return { sub, file, policyId, policiesDir, noWait: values["no-wait"] ?? false, where, local };
  }
  if (sub === "status")
    return {
      sub,
      batchId: argument("batch id"),
      watch: values.watch ?? false,
      where: batchWhere(values, env),
    };
  if (sub === "results") {
    const batchId = argument("batch id");
    const out = requiredFlag("out", values.out);
    return { sub, batchId, out, errors: values.errors, where: batchWhere(values, env) };
  }
  if (sub === "list")
    return { sub, limit: integerFlag("limit", values.limit, 20, 1, 1000), where: batchWhere(values, env) };
  throw new UsageError(
    sub
      ? `unknown batch command "${sub}" (submit, status, results, list)`
      : "give a batch command: submit, status, results or list",
  );
}

async function run(options: BatchOptions, io: CommandIo): Promise<BatchResult> {
  switch (options.sub) {
    case "submit":
      return { sub: "submit", ...(await submit(options, io)) };
    case "status": {
      const ctx = context(options.where);
      return { sub: "status", followed: await followBatch(ctx, options.batchId, options.watch, io) };
    }
    case "results":
      return results(options, io);
    case "list": {
      const batches = await context(options.where).batches.listBatches(options.limit);
      return { sub: "list", batches };
    }
  }
}

async function results(
  options: Extract<BatchOptions, { sub: "results" }>,
  io: CommandIo,
): Promise<BatchResult> {
  const { batchId, out } = options;
  const ctx = context(options.where);
  // The first read opens the connection to the table; the files may be large: each step says so when slow.
  const step = <T>(what: string, work: Promise<T>) =>
    slowStep(onTerminal(io.progress, io.note), `decide batch results: ${what}`, work);
  const batch = await step(`reading batch ${batchId} from ${ctx.table}`, ctx.batches.getBatch(batchId));
  if (!batch) throw new CommandError(`no batch ${batchId} in ${ctx.table}`);
  if (batch.status !== "completed")
    throw new CommandError(
      `batch ${batchId} is ${batch.status}: its results are written when every item is decided`,
    );
  const keys = batchKeys(batchId);
  const written = await step(`writing ${out}`, download(ctx.objects, keys.results, out));
  const errors = options.errors
    ? {
        path: options.errors,
        lines: await step(`writing ${options.errors}`, download(ctx.objects, keys.errors, options.errors)),
      }
    : undefined;
  return { sub: "results", out, results: written, errors };
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
function batchFilesQueueUrl(env: CommandEnv): string {
  const url = env[FUNCTION_ENV.BATCH_FILES_QUEUE_URL];
  if (!url) throw new UsageError(`BATCH_FILES_QUEUE_URL is not set: ${START_HINT}`);
  return url;
}

function print(result: BatchResult): Printed {
  switch (result.sub) {
    case "submit": {
      if (!result.followed) return { lines: [], exitCode: exitCodeFor(result.refused) };
      const printed = printFollowed(result.followed);
      return printed.exitCode === 0 ? { ...printed, exitCode: exitCodeFor(result.refused) } : printed;
    }
    case "status":
      return printFollowed(result.followed);
    case "results":
      return {
        lines: [
          `wrote ${result.out}: ${result.results} results`,
          ...(result.errors ? [`wrote ${result.errors.path}: ${result.errors.lines} errors`] : []),
        ],
        exitCode: 0,
      };
    case "list":
      return { lines: listLines(result.batches), exitCode: 0 };
  }
}

function listLines(batches: readonly BatchRecord[]): string[] {
  if (batches.length === 0) return ["no batches yet"];
  return batches.map((b) => {
    const c = b.counts;
    return `${b.batchId}  ${b.createdAt}  ${b.policyId}  ${b.status}  ${c.decided + c.failed + c.deadLettered}/${c.accepted} done, ${c.rejected} refused  ${b.source}`;
  });
}

/** `decide batch`: parse, run, print, each dispatching on the subcommand. */
export const batchCommand: OneShotCommand<BatchOptions, BatchResult> = { parse, run, print };
