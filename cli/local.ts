/**
 * `decide local` (also `npm start`): the whole pipeline on this machine, fed with the sample
 * items, with a live summary; Ctrl-C stops everything cleanly. The database persists between
 * runs in .cache/local unless --fresh is given.
 */

import { rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type LocalMode, type LocalModeOptions, startLocalMode } from "../infra/local/local-mode.ts";
import { summaryText } from "../infra/local/local-summary.ts";
import { LOCAL_SERVICES, type LocalService, resolveLocalPorts } from "../infra/local/ports.ts";
import { LOCAL_ACCESS_KEYS } from "../infra/local/stand-ins.ts";
import { CLI_ENV, FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { counted } from "../shared/domain/plural.ts";
import { integerFlag } from "./args.ts";
import type { CommandEnv, CommandIo, LongRunningCommand } from "./command.ts";
import { envFileText } from "./env-file.ts";
import { npmTookFlags } from "./npm-flags.ts";
import { startupProgress } from "./terminal/startup-progress.ts";
import { type StatusLine, statusLine } from "./terminal/terminal.ts";

export const localUsage = `decide local [--model file.gguf | --endpoint-url URL] [--fresh] [--no-samples] [--data-dir .cache/local]
             [--models-dir .cache/demo-models] [--port-base N] [--port 8080] [--dynamodb-port 8000] [--sqs-port 9324] [--bus-port 9195] [--review-port 8090]

Starts the decision endpoint (--port), DynamoDB Local (needs Java 17), local SQS queues (intake,
batch, auto-action, review, rejected, and a dead-letter queue per source as deployed), the local event bus with the deployed rules, the
review page and the functions; sends the sample items from events/items/samples.jsonl and prints
a live summary. Ctrl-C stops it all. The demo models (the first, and demo-large for the sample
moderation policy's cascade) are fitted on first use into --models-dir, kept for every data folder.

--port-base N (or DECIDE_LOCAL_PORT_BASE) puts the endpoint, DynamoDB Local, SQS, the bus and the
review page at N..N+4 and keeps the data in .cache/local-N, so two instances run side by side.
Each port also reads a variable (a flag wins): ${Object.values(LOCAL_SERVICES)
  .map(({ flag, env }) => `${flag} ${env}`)
  .join(", ")}.
A port in use stops the start with one line naming the service and the flag that moves it.
--endpoint-url uses a decision endpoint already running (npx decide serve --model F --port P)
instead of starting one in this process.`;

/**
 * How long a start takes, measured (docs/getting-started.md, "Expected times"): a first start
 * fits the demo model and DynamoDB Local creates its files; a later one reuses both.
 */
const START_TIMES =
  "a first start took 40 to 62 s on 2 busy shared cores, most of it fitting the demo model; a later one 17 s";

/** What `decide local` was asked: the local mode's options, and whether to send the samples. */
interface LocalOptions {
  readonly mode: Omit<LocalModeOptions, "say">;
  readonly samples: boolean;
}

/** The flags, and for the ports the variables that `localOptions` names. */
function parse(argv: string[], env: CommandEnv): LocalOptions {
  const npm = npmTookFlags(LOCAL_FLAGS, argv, env);
  if (npm) throw npm;
  const flags = localFlags(argv);
  return { mode: localOptions(flags, env), samples: !flags["no-samples"] };
}

/** Runs until SIGINT or SIGTERM; returns the exit code. */
async function run(options: LocalOptions, io: CommandIo): Promise<number> {
  // The live summary: redrawn in place on a terminal; any other line ends it first.
  const summaryLine = statusLine(process.stdout);
  // While it starts, each line has its time and a starting step counts its seconds; after, plain lines.
  const startup = startupProgress(process.stdout);
  let starting = true;
  const say = (line: string) => {
    if (starting) return startup.say(line);
    summaryLine.end();
    io.say(line);
  };
  startup.say(`starting the local pipeline (${START_TIMES})`);
  const local = await startLocalMode({ ...options.mode, say }).finally(() => startup.stop());
  startup.say("ready: every part answers");
  starting = false;
  const envFile = join(options.mode.dataDir, "env");
  await writeFile(envFile, envFileText(sharedVariables(local), ENV_FILE_COMMENT), { mode: 0o600 });
  const before = await local.summary();
  // What to do next comes last, where it stays on screen.
  io.say(nextSteps(local, envFile));
  if (before.decided + before.rejected > 0) {
    io.say(
      `kept ${counted(before.decided, "decision")} and ${counted(before.rejected, "rejection")} from earlier runs (--fresh starts empty)`,
    );
  }
  if (options.samples) {
    const sent = await local.feedSamples();
    io.say(
      before.decided + before.rejected > 0
        ? `sent ${sent} sample items again; those already decided are not decided twice`
        : `sent ${sent} sample items`,
    );
  }
  await summarizeUntilStopped(local, summaryLine, io);
  say("stopping...");
  // The file names this run's ports: gone with it, so that no command reaches for a stopped run.
  await rm(envFile, { force: true });
  await local.stop();
  io.say("stopped");
  return 0;
}

/**
 * `decide local`: parse, then run until Ctrl-C. No print step: what it shows (the exports, the
 * live summary) is written while it runs, and there is no result once it stops.
 */
export const localCommand: LongRunningCommand<LocalOptions> = { parse, run };

/** The flags of `decide local`, as `parseArgs` takes them. */
const LOCAL_FLAGS = {
  model: { type: "string" },
  "endpoint-url": { type: "string" },
  fresh: { type: "boolean", default: false },
  "no-samples": { type: "boolean", default: false },
  port: { type: "string" },
  "port-base": { type: "string" },
  "dynamodb-port": { type: "string" },
  "sqs-port": { type: "string" },
  "bus-port": { type: "string" },
  "review-port": { type: "string" },
  "data-dir": { type: "string" },
  "models-dir": { type: "string" },
} as const;

/** The flags of `decide local`. */
function localFlags(argv: string[]) {
  return parseArgs({
    args: argv,
    options: LOCAL_FLAGS,
    strict: true,
  }).values;
}

/** The local mode's options from the flags and, for ports, their variables. */
function localOptions(flags: ReturnType<typeof localFlags>, env: CommandEnv): Omit<LocalModeOptions, "say"> {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const base = integerFlag(
    "port-base",
    flags["port-base"] ?? env[CLI_ENV.DECIDE_LOCAL_PORT_BASE],
    undefined,
    1024,
    65530,
  );
  // A flag wins over its environment variable (LOCAL_SERVICES names both for each service).
  const overrides = Object.fromEntries(
    (Object.keys(LOCAL_SERVICES) as LocalService[]).map((service) => {
      const { flag, env: variable } = LOCAL_SERVICES[service];
      const name = flag.slice(2) as "port" | "dynamodb-port" | "sqs-port" | "bus-port" | "review-port";
      return [service, integerFlag(name, flags[name] ?? env[variable], undefined, 0, 65535)];
    }),
  );
  return {
    root,
    // A second instance (--port-base) keeps its data apart from the first.
    // Absolute: DynamoDB Local runs in its own folder and refuses a relative path.
    dataDir: resolve(
      flags["data-dir"] ?? join(root, ".cache", base === undefined ? "local" : `local-${base}`),
    ),
    fresh: flags.fresh ?? false,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags["models-dir"] ? { modelsDir: resolve(flags["models-dir"]) } : {}),
    ...(flags["endpoint-url"] ? { endpointUrl: flags["endpoint-url"] } : {}),
    ports: resolveLocalPorts(
      base,
      Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)),
    ),
  };
}

/** What the env file says about itself. */
const ENV_FILE_COMMENT =
  "Written by npm start (decide local) for this run; removed when it stops. In another terminal: source this file, or pass --local-env FILE to a decide command.";

/** The variables with which the other commands reach this run (the env file's). */
export const SHARED_VARIABLES = [
  "AWS_REGION",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_ENDPOINT_URL_DYNAMODB",
  "AWS_ENDPOINT_URL_SQS",
  "AWS_ENDPOINT_URL_EVENTBRIDGE",
  FUNCTION_ENV.DECISIONS_TABLE,
  FUNCTION_ENV.EVENT_BUS_NAME,
  FUNCTION_ENV.INTAKE_QUEUE_URL,
  CLI_ENV.DLQ_URL,
  CLI_ENV.REVIEW_QUEUE_URL,
  FUNCTION_ENV.BATCH_QUEUE_URL,
  FUNCTION_ENV.BATCH_FILES_QUEUE_URL,
  FUNCTION_ENV.BATCH_FOLDER,
  FUNCTION_ENV.DEAD_LETTER_ROUTES,
] as const;

/**
 * Their values for this run. A person signs as an operator, not as the pipeline's functions: the
 * local bus tells the two apart, as the deployed bus's policy does.
 */
function sharedVariables(local: LocalMode): Record<string, string> {
  return Object.fromEntries(
    SHARED_VARIABLES.map((name) => [
      name,
      // A person signs as an operator, not as the pipeline's functions (the local bus tells them apart).
      name === "AWS_ACCESS_KEY_ID" ? LOCAL_ACCESS_KEYS.operator : (local.env[name] ?? ""),
    ]),
  );
}

/** The one line to set the variables in another terminal, the commands to try and the review page. */
function nextSteps(local: LocalMode, envFile: string): string {
  // Relative when it is below the working folder, as a person would type it.
  const shown = relative(process.cwd(), envFile).startsWith("..")
    ? envFile
    : relative(process.cwd(), envFile);
  return [
    "",
    "In another terminal, to look or to send more:",
    `source ${shown}   # sets the ${SHARED_VARIABLES.length} variables the commands read (or: npx decide <command> --local-env ${shown})`,
    "npx decide publish events/items/samples.jsonl   # to INTAKE_QUEUE_URL",
    "npx decide batch submit events/items/moderation-batch.jsonl --policy content-moderation",
    'npx decide events --follow --detail-type "Decision Made"   # what a consumer of the bus receives',
    "",
    `Review page: ${local.reviewUrl}`,
    "Status:      npx decide status",
    "Replay:      npx decide replay --from intake --dry-run (or review, batch, auto-action, human-rule, ...)",
    "",
  ].join("\n");
}

/**
 * Shows the live summary every 2 s until SIGINT or SIGTERM: one refresh at a time, the next 2 s
 * after the last one ended (a slow table makes the summary slower, never the pipeline).
 */
async function summarizeUntilStopped(
  local: LocalMode,
  summaryLine: StatusLine,
  io: CommandIo,
): Promise<void> {
  let stopping = false;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      stopping = true;
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      wake();
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  // The summary in progress is awaited before the services stop (it must not outlive them).
  while (!stopping) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    if (stopping) break;
    await local
      .summary()
      .then((s) => summaryLine.show(summaryText(s)))
      .catch((error: unknown) => {
        // Ctrl-C in a terminal reaches the whole process group, DynamoDB Local included, so a
        // summary in flight as it stops may fail: that is the stop, not news.
        if (stopping) return;
        summaryLine.end();
        io.note(`summary failed: ${(error as Error).message}`);
      });
  }
  await stopped;
}
