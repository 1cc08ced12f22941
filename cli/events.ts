/**
 * `decide events`: what the local bus delivers, as a consumer of the deployed bus receives it
 * (the EventBridge envelope: version, id, detail-type, source, account, time, region, resources,
 * detail). It reads the log of recent events the local mode's bus keeps, filtered by an
 * EventBridge event pattern (from --detail-type and --policy, or --pattern as a rule would hold
 * it, matched by the same matcher the local rules use), and with --follow keeps printing new
 * ones until Ctrl-C. The local bus only: a deployed bus keeps no log to read.
 */
import { get } from "node:http";
import { parseArgs } from "node:util";
import { EVENT_LOG_PATH } from "../infra/local/event-bus.ts";
import { type EventPattern, matchesPattern } from "../shared/domain/event-pattern.ts";
import { counted } from "../shared/domain/plural.ts";
import { CommandError, integerFlag, MissingSettingError, UsageError } from "./args.ts";
import type { CommandEnv, CommandIo, OneShotCommand, Printed } from "./command.ts";
import { terminalSafeJson } from "./terminal/terminal.ts";

export const eventsUsage = `decide events [--follow] [--detail-type TYPE]... [--policy ID]... [--pattern JSON] [--last 10]
              [--bus-url URL] [--one-line]

Prints the events the local bus (npm start) delivered, each in the envelope a consumer of the
deployed bus receives, oldest first: the last 10 (--last N; 0 for none), then with --follow each
new one as it comes, until Ctrl-C (exit 0). --detail-type and --policy (each may repeat) make the
EventBridge pattern {"detail-type": [...], "detail": {"policyId": [...]}}; --pattern takes any
pattern, as your rule would hold it, to see what it would receive. On a terminal each event is
indented JSON; otherwise one JSON object a line (--one-line forces it).
The bus: --bus-url, default AWS_ENDPOINT_URL_EVENTBRIDGE as npm start's env file sets it.`;

/** How often --follow asks the bus for new events: it is on this machine, so often is cheap. */
const POLL_MS = 500;

/** What `decide events` was asked. */
interface EventsOptions {
  readonly busUrl: string;
  readonly pattern: EventPattern | undefined;
  readonly follow: boolean;
  readonly last: number;
  readonly oneLine: boolean;
}

/** A page of the bus's log. */
interface LogPage {
  readonly events: readonly { readonly seq: number; readonly event: unknown }[];
  readonly missed: number;
  readonly last: number;
}

function parse(argv: string[], env: CommandEnv): EventsOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      follow: { type: "boolean", short: "f", default: false },
      "detail-type": { type: "string", multiple: true },
      policy: { type: "string", multiple: true },
      pattern: { type: "string" },
      last: { type: "string" },
      "bus-url": { type: "string" },
      "one-line": { type: "boolean", default: false },
    },
    strict: true,
  });
  const busUrl = values["bus-url"] || env.AWS_ENDPOINT_URL_EVENTBRIDGE;
  if (!busUrl) throw new MissingSettingError("bus-url", "AWS_ENDPOINT_URL_EVENTBRIDGE");
  if (/\.amazonaws\.com/.test(busUrl))
    throw new UsageError(
      `${busUrl} is AWS's EventBridge, which keeps no log to read: add a rule with your pattern and a target you can read (docs/publishing-and-events.md)`,
    );
  return {
    busUrl: busUrl.replace(/\/$/, ""),
    pattern: patternOf(values),
    follow: values.follow ?? false,
    last: integerFlag("last", values.last, 10, 0, 10_000),
    oneLine: values["one-line"] ?? false,
  };
}

/** The pattern the flags describe (none: every event). */
function patternOf(values: {
  "detail-type"?: string[] | undefined;
  policy?: string[] | undefined;
  pattern?: string | undefined;
}): EventPattern | undefined {
  const types = values["detail-type"] ?? [];
  const policies = values.policy ?? [];
  if (values.pattern !== undefined) {
    if (types.length > 0 || policies.length > 0)
      throw new UsageError("give --pattern, or --detail-type and --policy, not both");
    return checkedPattern(values.pattern);
  }
  if (types.length === 0 && policies.length === 0) return undefined;
  return {
    ...(types.length > 0 ? { "detail-type": types } : {}),
    ...(policies.length > 0 ? { detail: { policyId: policies } } : {}),
  };
}

/** `text` as an event pattern, or a usage error saying what is wrong with it. */
function checkedPattern(text: string): EventPattern {
  let pattern: unknown;
  try {
    pattern = JSON.parse(text);
  } catch {
    throw new UsageError(`--pattern is not JSON: ${text.slice(0, 80)}`);
  }
  if (typeof pattern !== "object" || pattern === null || Array.isArray(pattern))
    throw new UsageError("--pattern must be a JSON object, as an EventBridge rule's pattern is");
  try {
    // Matching an empty event walks the whole pattern: a malformed one throws here, not later.
    matchesPattern(pattern as EventPattern, {});
  } catch (error) {
    throw new UsageError(`--pattern: ${(error as Error).message}`);
  }
  return pattern as EventPattern;
}

/**
 * One event as printed: indented JSON on a terminal, else one line; either way with every
 * character a terminal would act on escaped (`terminalSafeJson`), since a producer chose them.
 */
export function eventText(event: unknown, oneLine: boolean): string {
  return terminalSafeJson(oneLine ? JSON.stringify(event) : `${JSON.stringify(event, null, 2)}\n`);
}

/**
 * A page of the log after `after`; a CommandError when the bus does not answer. A connection of
 * its own each time (no keep-alive), so that nothing holds the process open after Ctrl-C.
 */
function readLog(busUrl: string, after: number): Promise<LogPage> {
  return new Promise((resolve, reject) => {
    const request = get(`${busUrl}${EVENT_LOG_PATH}?after=${after}`, { agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => {
        if (response.statusCode !== 200)
          reject(
            new CommandError(`${busUrl} is not the local bus of npm start (HTTP ${response.statusCode})`),
          );
        else resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as LogPage);
      });
    });
    request.on("error", () =>
      reject(new CommandError(`nothing answers at ${busUrl}: is npm start running?`)),
    );
  });
}

/** What `decide events` found: the last matching events it holds, and how many --follow printed. */
interface EventsResult {
  readonly recent: readonly unknown[];
  readonly followed: number;
}

/**
 * Reads the last matching events the bus holds; with --follow prints them at once and then each
 * new one as it comes, until a signal (so print has nothing left to write).
 */
async function run(options: EventsOptions, io: CommandIo): Promise<EventsResult> {
  const matches = (event: unknown) => !options.pattern || matchesPattern(options.pattern, event);
  // The log from its start: the last N matching events among those it still holds.
  let after = 0;
  const held: unknown[] = [];
  for (let page = await readLog(options.busUrl, 0); ; page = await readLog(options.busUrl, after)) {
    held.push(...page.events.map((e) => e.event).filter(matches));
    after = page.events.at(-1)?.seq ?? page.last;
    if (page.events.length === 0 || after >= page.last) break;
  }
  const recent = options.last > 0 ? held.slice(-options.last) : [];
  if (!options.follow) return { recent, followed: 0 };
  const print = (event: unknown) => io.say(eventText(event, oneLineOn(options)));
  for (const event of recent) print(event);
  io.note(
    `following the local bus at ${options.busUrl}${options.pattern ? ` for ${JSON.stringify(options.pattern)}` : ""} (Ctrl-C stops)`,
  );
  return { recent: [], followed: await follow(options, after, matches, print, io) };
}

/** One line an event when asked or when stdout is not a terminal. */
function oneLineOn(options: EventsOptions): boolean {
  return options.oneLine || !process.stdout.isTTY;
}

/** The recent events (with --follow, already printed as they came). */
function print(result: EventsResult, options: EventsOptions): Printed {
  return { lines: result.recent.map((event) => eventText(event, oneLineOn(options))), exitCode: 0 };
}

/**
 * Asks for new events every {@link POLL_MS} until SIGINT or SIGTERM; returns how many it printed
 * (a bus that goes away is a CommandError).
 */
async function follow(
  options: EventsOptions,
  from: number,
  matches: (event: unknown) => boolean,
  print: (event: unknown) => void,
  io: CommandIo,
): Promise<number> {
  let stopped = false;
  let wake = () => {};
  const stop = () => {
    stopped = true;
    wake();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    let after = from;
    let printed = 0;
    while (!stopped) {
      const page = await readLog(options.busUrl, after);
      if (page.missed > 0)
        io.note(
          `(${counted(page.missed, "event")} left the bus's log before ${page.missed === 1 ? "it" : "they"} could be read)`,
        );
      for (const { seq, event } of page.events) {
        after = seq;
        if (!matches(event)) continue;
        print(event);
        printed++;
      }
      if (page.events.length === 0 && !stopped)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
    }
    return printed;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** `decide events`: the last matching events, or with --follow every new one until Ctrl-C. */
export const eventsCommand: OneShotCommand<EventsOptions, EventsResult> = { parse, run, print };
