/**
 * `decide publish`: async batch moderation. Validates every line of a JSONL or CSV file (bad lines
 * reported with their numbers and reasons, never sent), sends the rest in batches of 10 with
 * retries, shows progress (a bar with rate and ETA on a terminal, plain lines otherwise), and
 * resumes without re-sending ids already sent. AWS CLI conventions: --region, --profile,
 * --queue-url, or --event-bus for "Decision Requested" events; AWS_ENDPOINT_URL_* for local runs.
 */
import { appendFile, readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { formatOf, INPUT_FORMATS, type InputFormat } from "../shared/domain/input/item-lines.ts";
import { MAX_LINE_BYTES } from "../shared/domain/input/lines.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { readItems } from "../shared/use-cases/publish/read-items.ts";
import { type PublishTarget, sendItems } from "../shared/use-cases/publish/send-items.ts";
import { MissingSettingError, UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, publisherTo, queueAt } from "./aws.ts";
import type { CommandEnv, CommandIo, OneShotCommand, Printed } from "./command.ts";
import { openInput } from "./input-file.ts";
import { exitCodeFor, redrawLine, refusedLineText } from "./terminal.ts";

export const publishUsage = `decide publish <file.jsonl | file.csv | -> [--queue-url URL | --event-bus NAME] [--region R] [--profile P]
               [--policies-dir events/policies] [--format jsonl|csv] [--resume-file F] [--dry-run]

Validates every line (bad ones are listed with their line numbers and not sent), then sends the
rest in batches of 10 to the intake queue (--queue-url, default INTAKE_QUEUE_URL as \`npm start\`
exports it) or as "Decision Requested" events to a bus (--event-bus). Ids recorded in the resume
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
  const queueUrl = values["queue-url"] || env.INTAKE_QUEUE_URL;
  if (queueUrl) return { queueUrl };
  if (values["dry-run"]) return undefined;
  throw new MissingSettingError("queue-url", "INTAKE_QUEUE_URL", "--event-bus NAME");
}

/** Progress on `stream`: a redrawn bar on a terminal, a line every 10% otherwise. */
function progress(stream: NodeJS.WriteStream, total: number) {
  const started = performance.now();
  let lastPlain = -1;
  return (sent: number) => {
    const seconds = (performance.now() - started) / 1000;
    const rate = sent / Math.max(seconds, 1e-3);
    const eta = rate > 0 ? Math.round((total - sent) / rate) : 0;
    const share = total ? sent / total : 1;
    if (stream.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      redrawLine(
        stream,
        `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${sent}/${total} ${rate.toFixed(0)}/s ETA ${eta} s`,
      );
      if (sent === total) stream.write("\n");
    } else {
      const decile = Math.floor(share * 10);
      if (decile !== lastPlain) {
        lastPlain = decile;
        stream.write(
          `sent ${sent}/${total} (${Math.round(share * 100)}%), ${rate.toFixed(0)}/s, ETA ${eta} s\n`,
        );
      }
    }
  };
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

/** Validates every line (refused ones noted on stderr), then sends those not sent before. */
async function run(options: PublishOptions, io: CommandIo): Promise<Published> {
  const { target, resumeFile } = options;
  const aws = awsOptions(options.aws);
  const policies = await PolicyRegistry.fromFolder(options.policiesDir);
  const { items, rejected } = await readItems(
    await openInput(options.input),
    options.format,
    (id) => policies.current(id) !== undefined,
  );
  for (const bad of rejected) io.note(refusedLineText(bad.line, bad.problems));
  const already = await alreadySent(resumeFile);
  const todo = items.filter((item) => !already.has(item.id));
  const counts = { skipped: items.length - todo.length, refused: rejected.length };
  if (target === undefined || options.dryRun) return { dryRun: true, sent: todo.length, ...counts };
  const to: PublishTarget =
    "queueUrl" in target
      ? { kind: "queue", queue: queueAt(target.queueUrl, aws) }
      : { kind: "bus", publisher: publisherTo(target.busName, aws, { source: PUBLISH_SOURCE }) };
  const show = progress(io.progress, todo.length);
  let sent = 0;
  show(0);
  await sendItems(todo, to, {
    onBatch: async (ids) => {
      if (resumeFile) await appendFile(resumeFile, `${ids.join("\n")}\n`);
      sent += ids.length;
      show(sent);
    },
  });
  return { dryRun: false, sent, ...counts };
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
