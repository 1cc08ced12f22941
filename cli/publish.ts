/**
 * `decide publish`: async batch moderation. Validates every line of a JSONL or CSV file (bad lines
 * reported with their numbers and reasons, never sent), sends the rest in batches of 10 with
 * retries, shows progress (a bar with rate and ETA on a terminal, plain lines otherwise), and
 * resumes without re-sending ids already sent. AWS CLI conventions: --region, --profile,
 * --queue-url, or --event-bus for "Decision Requested" events; AWS_ENDPOINT_URL_* for local runs.
 */
import { appendFile, readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { readItems } from "../shared/use-cases/publish/read-items.ts";
import { type PublishTarget, sendItems } from "../shared/use-cases/publish/send-items.ts";
import { UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, publisherTo, queueAt } from "./aws.ts";

export const publishUsage = `decide publish <file.jsonl | file.csv | -> (--queue-url URL | --event-bus NAME) [--region R] [--profile P]
               [--policies-dir events/policies] [--format jsonl|csv] [--resume-file F] [--dry-run]

Validates every line (bad ones are listed with their line numbers and not sent), then sends the
rest in batches of 10. Ids recorded in the resume file (default <file>.sent) are not sent again.
CSV: a header with id, policy and state; other columns become metadata.`;

/** The source of "Decision Requested" events sent by this command (the intake rule takes any but the pipeline's own). */
export const PUBLISH_SOURCE = "decide.publish";

async function readInput(path: string): Promise<string> {
  if (path === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
  return readFile(path, "utf8").catch((error: unknown) => {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  });
}

/** Progress on stderr: a redrawn bar on a terminal, a line every 10% otherwise. */
function progress(total: number) {
  const started = performance.now();
  let lastPlain = -1;
  return (sent: number) => {
    const seconds = (performance.now() - started) / 1000;
    const rate = sent / Math.max(seconds, 1e-3);
    const eta = rate > 0 ? Math.round((total - sent) / rate) : 0;
    const share = total ? sent / total : 1;
    if (process.stderr.isTTY) {
      const width = 30;
      const filled = Math.round(share * width);
      process.stderr.write(
        `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${sent}/${total} ${rate.toFixed(0)}/s ETA ${eta}s `,
      );
      if (sent === total) process.stderr.write("\n");
    } else {
      const decile = Math.floor(share * 10);
      if (decile !== lastPlain) {
        lastPlain = decile;
        process.stderr.write(
          `sent ${sent}/${total} (${Math.round(share * 100)}%), ${rate.toFixed(0)}/s, ETA ${eta} s\n`,
        );
      }
    }
  };
}

/** Runs the command; returns the exit code (1 when some lines were invalid). */
export async function publishCommand(argv: string[]): Promise<number> {
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
  const format = (values.format ?? (input.toLowerCase().endsWith(".csv") ? "csv" : "jsonl")) as
    | "jsonl"
    | "csv";
  if (format !== "jsonl" && format !== "csv")
    throw new UsageError(`--format must be jsonl or csv, got "${values.format}"`);
  if (!values["dry-run"] && !values["queue-url"] === !values["event-bus"]) {
    throw new UsageError("give one target: --queue-url or --event-bus");
  }
  const aws = awsOptions(values);

  const policies = await PolicyRegistry.fromFolder(values["policies-dir"]!);
  const { items, rejected } = readItems(
    await readInput(input),
    format,
    (id) => policies.current(id) !== undefined,
  );
  for (const bad of rejected) {
    console.error(
      `line ${bad.line}: not sent: ${bad.problems.map((p) => `${p.field}: ${p.message}`).join("; ")}`,
    );
  }
  const resumeFile = values["resume-file"] ?? (input === "-" ? undefined : `${input}.sent`);
  const already = new Set(
    resumeFile
      ? (await readFile(resumeFile, "utf8").catch(() => ""))
          .split("\n")
          .map((line) => line.trim())
          .filter(Boolean)
      : [],
  );
  const todo = items.filter((item) => !already.has(item.id));
  const skipped = items.length - todo.length;
  if (values["dry-run"]) {
    console.log(`dry run: ${todo.length} would be sent, ${skipped} already sent, ${rejected.length} invalid`);
    return rejected.length ? 1 : 0;
  }
  const target: PublishTarget = values["queue-url"]
    ? { kind: "queue", queue: queueAt(values["queue-url"], aws) }
    : { kind: "bus", publisher: publisherTo(values["event-bus"]!, aws, { source: PUBLISH_SOURCE }) };
  const show = progress(todo.length);
  let sent = 0;
  show(0);
  await sendItems(todo, target, {
    onBatch: async (ids) => {
      if (resumeFile) await appendFile(resumeFile, `${ids.join("\n")}\n`);
      sent += ids.length;
      show(sent);
    },
  });
  console.log(`${sent} sent, ${skipped} already sent before, ${rejected.length} invalid lines not sent`);
  return rejected.length ? 1 : 0;
}
