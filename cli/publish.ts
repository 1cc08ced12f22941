/**
 * `decide publish`: async batch moderation. Reads a JSONL or CSV file line by line, validating
 * each (bad lines reported with their numbers and reasons, never sent) and sending the rest in
 * batches of 10 with retries as it goes, so memory does not grow with the file; shows progress
 * (a bar with rate and ETA on a terminal, plain lines otherwise), and resumes without re-sending
 * ids already sent. AWS CLI conventions: --region, --profile,
 * --queue-url, or --event-bus for "Decision Requested" events; AWS_ENDPOINT_URL_* for local runs.
 */
import { appendFile, readFile, stat } from "node:fs/promises";
import { parseArgs } from "node:util";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { formatOf, INPUT_FORMATS, type InputFormat } from "../shared/domain/input/item-lines.ts";
import { MAX_LINE_BYTES } from "../shared/domain/input/lines.ts";
import { MAX_BATCH } from "../shared/domain/message-queue.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { type PublishableItem, readItems } from "../shared/use-cases/publish/read-items.ts";
import { type PublishTarget, sendItems } from "../shared/use-cases/publish/send-items.ts";
import { MissingSettingError, UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, publisherTo, queueAt } from "./aws.ts";
import type { CommandEnv, CommandIo, OneShotCommand, Printed } from "./command.ts";
import { openInput } from "./input-file.ts";
import { onTerminal, slowStep } from "./terminal/slow-step.ts";
import { exitCodeFor, refusedLineText, statusLine } from "./terminal/terminal.ts";

export const publishUsage = `decide publish <file.jsonl | file.csv | -> [--queue-url URL | --event-bus NAME] [--region R] [--profile P]
               [--policies-dir events/policies] [--format jsonl|csv] [--resume-file F] [--dry-run]

Reads the file line by line, validating each (bad ones are listed with their line numbers and
not sent) and sending the rest in batches of 10 as it goes, to the intake queue (--queue-url,
default INTAKE_QUEUE_URL as \`npm start\` exports it) or as "Decision Requested" events to a bus
(--event-bus); memory does not grow with the file. Ids recorded in the resume
file (default <file>.sent) are not sent again. Lines: UTF-8 (a byte-order mark is dropped, CRLF
is fine), at most ${MAX_LINE_BYTES} bytes each. CSV: a header with id, policy and state; other
columns become metadata. Exits 1 when some lines were refused.`;

/** The source of "Decision Requested" events sent by this command (the intake rule takes any but the pipeline's own). */
export const PUBLISH_SOURCE = "decide.publish";

/** Where to send: the flag given, else the intake queue `npm start` exports; none for a dry run. */
function targetOf(
  values: {
    "queue-url"?: string | undefined;
    "event-bus"?: string | undefined;
    "dry-run"?: boolean | undefined;
  },
  env: CommandEnv,
): { queueUrl: string } | { busName: string } | undefined {
  if (values["queue-url"] && values["event-bus"])
    throw new UsageError("give one target: --queue-url or --event-bus, not both");
  if (values["event-bus"]) return { busName: values["event-bus"] };
  const queueUrl = values["queue-url"] || env[FUNCTION_ENV.INTAKE_QUEUE_URL];
  if (queueUrl) return { queueUrl };
  if (values["dry-run"]) return undefined;
  throw new MissingSettingError("queue-url", FUNCTION_ENV.INTAKE_QUEUE_URL, "--event-bus NAME");
}

/**
 * Progress on `stream`, by the share of the file read (the lines are validated and sent as they
 * are read, so the item count is known only at the end): a redrawn bar on a terminal, a line
 * every 10% otherwise, and the last; from standard input (no size), a line every 10,000 items.
 */
function progress(stream: NodeJS.WriteStream, size: number | undefined) {
  const started = performance.now();
  const line = statusLine(stream);
  let lastStep = -1;
  // The count last put on a line: the closing line is not written again for the same count.
  let shown = -1;
  const show = (sent: number, bytesRead: number, last = false) => {
    if (last && sent === shown) return;
    const seconds = (performance.now() - started) / 1000;
    const rate = `${(sent / Math.max(seconds, 1e-3)).toFixed(0)}/s`;
    if (size === undefined) {
      const step = Math.floor(sent / 10_000);
      if (step !== lastStep || last) {
        line.show(`sent ${sent}, ${rate}`);
        shown = sent;
      }
      lastStep = step;
      return;
    }
    const share = size > 0 ? Math.min(1, bytesRead / size) : 1;
    const eta = share > 0 ? Math.round((seconds / share) * (1 - share)) : 0;
    const text = `sent ${sent}, ${Math.round(share * 100)}% of the file read, ${rate}, ETA ${eta} s`;
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      line.show(`[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${text}`);
      shown = sent;
    } else {
      const step = Math.floor(share * 10);
      if (step !== lastStep || last) {
        line.show(text);
        shown = sent;
      }
      lastStep = step;
    }
  };
  return { show, end: () => line.end() };
}

/** The chunks of `source`, counting their bytes into `read.bytes`. */
async function* counted(source: AsyncIterable<Uint8Array>, read: { bytes: number }) {
  for await (const chunk of source) {
    read.bytes += chunk.byteLength;
    yield chunk;
  }
}

/** What `decide publish` was asked. */
interface PublishOptions {
  /** A file, or `-` for stdin. */
  readonly input: string;
  readonly format: InputFormat;
  /** None: a dry run without a queue named. */
  readonly target: { queueUrl: string } | { busName: string } | undefined;
  readonly resumeFile: string | undefined;
  readonly policiesDir: string;
  readonly dryRun: boolean;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
}

/** How many were sent (or would be), skipped as sent before, and refused. */
interface Published {
  readonly dryRun: boolean;
  readonly sent: number;
  readonly skipped: number;
  readonly refused: number;
}

function parse(argv: string[], env: CommandEnv): PublishOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "queue-url": { type: "string" },
      "event-bus": { type: "string" },
      ...AWS_FLAGS,
      "policies-dir": { type: "string", default: "events/policies" },
      format: { type: "string" },
      "resume-file": { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
    strict: true,
  });
  const input = positionals[0];
  if (!input || positionals.length > 1)
    throw new UsageError("give exactly one input: a .jsonl or .csv file, or - for stdin");
  const format = (values.format ?? formatOf(input)) as InputFormat;
  if (!INPUT_FORMATS.includes(format))
    throw new UsageError(`--format must be jsonl or csv, got "${values.format}"`);
  return {
    input,
    format,
    target: targetOf(values, env),
    resumeFile: values["resume-file"] ?? (input === "-" ? undefined : `${input}.sent`),
    policiesDir: values["policies-dir"]!,
    dryRun: values["dry-run"] ?? false,
    aws: { region: values.region, profile: values.profile },
  };
}

/** Ids the resume file records as sent. */
async function alreadySent(resumeFile: string | undefined): Promise<Set<string>> {
  if (!resumeFile) return new Set();
  const text = await readFile(resumeFile, "utf8").catch(() => "");
  return new Set(
    text
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean),
  );
}

/**
 * Reads, validates and sends line by line, ten at a time (memory stays at a batch, plus the ids
 * seen, however large the file): refused lines are noted on stderr as they are read, ids the
 * resume file records are skipped, and each batch sent is recorded there.
 */
async function run(options: PublishOptions, io: CommandIo): Promise<Published> {
  const { target, resumeFile } = options;
  const aws = awsOptions(options.aws);
  const policies = await PolicyRegistry.fromFolder(options.policiesDir);
  const already = await alreadySent(resumeFile);
  const read = { bytes: 0 };
  const size = options.input === "-" ? undefined : (await stat(options.input).catch(() => undefined))?.size;
  const source = counted(await openInput(options.input), read);
  const dryRun = target === undefined || options.dryRun;
  const to: PublishTarget | undefined =
    dryRun || target === undefined
      ? undefined
      : "queueUrl" in target
        ? { kind: "queue", queue: queueAt(target.queueUrl, aws) }
        : { kind: "bus", publisher: publisherTo(target.busName, aws, { source: PUBLISH_SOURCE }) };
  const bar = progress(io.progress, size);
  const counts = { sent: 0, skipped: 0, refused: 0 };
  let batch: PublishableItem[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const send = to && sendItems(batch, to, { onBatch: (ids) => record(resumeFile, ids) });
    // The first send opens the connection (credentials, the service's address): it may take seconds.
    if (send)
      await (counts.sent === 0
        ? slowStep(
            onTerminal(io.progress, io.note),
            `decide publish: sending to ${targetName(options)}`,
            send,
          )
        : send);
    counts.sent += batch.length;
    batch = [];
    if (to) bar.show(counts.sent, read.bytes);
  };
  for await (const entry of readItems(source, options.format, (id) => policies.current(id) !== undefined)) {
    if ("refused" in entry) {
      bar.end();
      io.note(refusedLineText(entry.refused.line, entry.refused.problems));
      counts.refused++;
    } else if (already.has(entry.item.id)) counts.skipped++;
    else {
      batch.push(entry.item);
      if (batch.length === MAX_BATCH) await flush();
    }
  }
  await flush();
  if (to && counts.sent > 0) bar.show(counts.sent, read.bytes, true);
  bar.end();
  return { dryRun, ...counts };
}

/** The queue or bus the items go to, in words. */
function targetName(options: PublishOptions): string {
  const target = options.target;
  return target === undefined
    ? "nowhere"
    : "queueUrl" in target
      ? `the queue ${target.queueUrl}`
      : `the event bus ${target.busName}`;
}

/** Appends the ids of a batch sent to the resume file (when there is one). */
async function record(resumeFile: string | undefined, ids: readonly string[]): Promise<void> {
  if (resumeFile) await appendFile(resumeFile, `${ids.join("\n")}\n`);
}

/** The counts in one line; exit 1 when some lines were refused. */
function print({ dryRun, sent, skipped, refused }: Published): Printed {
  const line = dryRun
    ? `dry run: ${sent} would be sent, ${skipped} already sent, ${refused} refused`
    : `${sent} sent, ${skipped} already sent before, ${refused} refused ${refused === 1 ? "line" : "lines"} not sent`;
  return { lines: [line], exitCode: exitCodeFor(refused) };
}

/** `decide publish`: parse, run, print. */
export const publishCommand: OneShotCommand<PublishOptions, Published> = { parse, run, print };
