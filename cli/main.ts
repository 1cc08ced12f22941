/**
 * The `decide` command line: one entry, one module per command.
 */
import { DecisionRuntimeError } from "../endpoint/runtime/errors.ts";
import { adviceFor } from "./advice.ts";
import { CommandError, UsageError } from "./args.ts";
import { type Command, runCommand } from "./command.ts";
import { applyEnvFile, ENV_FILE_USAGE, takeEnvFileFlag } from "./env-file.ts";
import { flagProblem } from "./flag-errors.ts";
import { closest } from "./suggest.ts";
import { onTerminal, slowStep } from "./terminal/slow-step.ts";

/** A command's module: its parse, run and print steps, and its usage text. */
interface CommandModule {
  readonly command: Command;
  readonly usage: string;
}

/**
 * Commands are loaded when invoked, so that `decide serve` in the container loads only the
 * endpoint (the local mode's stand-ins and their dev-only packages are not in the image).
 */
export const COMMANDS: Record<
  string,
  { readonly what: string; readonly summary: string; readonly load: () => Promise<CommandModule> }
> = {
  "make-model": {
    what: "writes a generated GGUF model (tests, benchmarks, the demo)",
    summary: "decide make-model --shape <tiny|qwen2-0.5b|qwen2-1.5b|demo> --out <file.gguf>",
    load: async () => {
      const m = await import("./make-model.ts");
      return { command: m.makeModelCommand, usage: m.makeModelUsage };
    },
  },
  score: {
    what: "scores one decision on a local model and prints JSON",
    summary: "decide score --model <file.gguf> --input <decision.json | ->",
    load: async () => {
      const m = await import("./score.ts");
      return { command: m.scoreCommand, usage: m.scoreUsage };
    },
  },
  serve: {
    what: "runs the decision endpoint (System One, OpenAI chat, SageMaker)",
    summary: "decide serve --model <file.gguf | folder> [--port 8080] [--gpu auto|cuda|off]",
    load: async () => {
      const m = await import("./serve.ts");
      return { command: m.serveCommand, usage: m.serveUsage };
    },
  },
  local: {
    what: "runs the whole pipeline on this machine (npm start)",
    summary: "decide local [--model file.gguf] [--fresh] [--port-base N] (also npm start)",
    load: async () => {
      const m = await import("./local.ts");
      return { command: m.localCommand, usage: m.localUsage };
    },
  },
  publish: {
    what: "sends a file of items to the intake queue or the event bus",
    summary: "decide publish <file.jsonl | file.csv | -> (--queue-url URL | --event-bus NAME)",
    load: async () => {
      const m = await import("./publish.ts");
      return { command: m.publishCommand, usage: m.publishUsage };
    },
  },
  batch: {
    what: "submits a file as a batch job, follows it, writes its results",
    summary: "decide batch submit <file> --policy ID | status <id> [--watch] | results <id> --out F | list",
    load: async () => {
      const m = await import("./batch/batch.ts");
      return { command: m.batchCommand, usage: m.batchUsage };
    },
  },
  events: {
    what: "prints what the local bus delivers, as a consumer of the deployed bus receives it",
    summary: 'decide events [--follow] [--detail-type "Decision Made"] [--policy ID] [--pattern JSON]',
    load: async () => {
      const m = await import("./events.ts");
      return { command: m.eventsCommand, usage: m.eventsUsage };
    },
  },
  status: {
    what: "counts records per state and policy, queues and dead letters",
    summary: "decide status [--table NAME] [--queue-url URL] [--dlq-url URL]",
    load: async () => {
      const m = await import("./status.ts");
      return { command: m.statusCommand, usage: m.statusUsage };
    },
  },
  replay: {
    what: "sends dead letters home, each to the queue or bus it came from",
    summary: "decide replay --from SOURCE [--policy ID] [--dry-run] | --all --from SOURCE",
    load: async () => {
      const m = await import("./replay.ts");
      return { command: m.replayCommand, usage: m.replayUsage };
    },
  },
  capacity: {
    what: "simulates a load on the synthesized stack: instances, backlog, dead letters, cost",
    summary:
      "decide capacity --rate R [--for 30m] [--burst X --burst-for D] [--template F] [--max-instances N] | --lane batch --items N",
    load: async () => {
      const m = await import("./capacity/capacity-lanes.ts");
      return { command: m.capacityCommand, usage: m.capacityUsage };
    },
  },
  calibrate: {
    what: "fits temperature and thresholds from labels; checks drift",
    summary:
      "decide calibrate --plan --policy ID | --from-table T --propose | --apply-proposal F | --rescore --policy ID | --input labelled.jsonl --policy ID [--apply] | --check --baseline F --recent F",
    load: async () => {
      const m = await import("./calibrate/calibrate.ts");
      return { command: m.calibrateCommand, usage: m.calibrateUsage };
    },
  },
  audit: {
    what: "estimates each policy's rate of wrong automatic actions from audit samples",
    summary: "decide audit --from-table TABLE [--policy ID] [--since YYYY-MM-DD]",
    load: async () => {
      const m = await import("./audit.ts");
      return { command: m.auditCommand, usage: m.auditUsage };
    },
  },
  review: {
    what: "loads gold items (known answers) into the review queue; each reviewer's accuracy on them",
    summary: "decide review gold --file gold.jsonl | accuracy --policy ID",
    load: async () => {
      const m = await import("./review.ts");
      return { command: m.reviewCommand, usage: m.reviewUsage };
    },
  },
  "what-if": {
    what: "re-answers recent items under a candidate policy or model: what would change",
    summary:
      "decide what-if --candidate policy.json [--model F | --endpoint-name N | --url U] --from-table T",
    load: async () => {
      const m = await import("./what-if/what-if.ts");
      return { command: m.whatIfCommand, usage: m.whatIfUsage };
    },
  },
};

/** The flags every command takes (the entry point reads them), as each usage ends. */
export const COMMON_FLAGS = `Every command also takes:
  ${ENV_FILE_USAGE}
  --debug           show stack traces`;

/** A command's usage as \`decide <command> --help\` prints it: its own, then the common flags. */
export async function usageOf(name: string): Promise<string> {
  return `${(await COMMANDS[name]!.load()).usage}\n\n${COMMON_FLAGS}`;
}

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return `Usage: decide <command> [flags]\n\nCommands:\n${Object.entries(COMMANDS)
    .map(
      ([name, command]) =>
        `  ${name.padEnd(width)}  ${command.what}\n  ${" ".repeat(width)}  ${command.summary}`,
    )
    .join("\n")}\n\nRun "decide <command> --help" for details.\n${COMMON_FLAGS}`;
}

/** Runs the CLI with `argv` (without node and script); returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  let given: string[];
  try {
    const taken = takeEnvFileFlag(argv.filter((arg) => arg !== "--debug"));
    // Into the process environment, as `source` would: the AWS SDK reads its endpoints there.
    if (taken.envFile !== undefined) applyEnvFile(taken.envFile, process.env);
    given = taken.argv;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`decide: ${error.message}`);
    return 2;
  }
  const [name, ...rest] = given;
  if (name === undefined) {
    console.error(`decide: no command given\n\n${overview()}`);
    return 2;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    console.log(overview());
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    const guess = closest(name, Object.keys(COMMANDS));
    console.error(
      `decide: unknown command "${name}"${guess ? `; did you mean "${guess}"?` : ""}\nsee: npx decide --help`,
    );
    return 2;
  }
  const command = await slowStep(
    onTerminal(process.stderr, (line) => console.error(line)),
    `decide ${name}: loading the command's modules`,
    entry.load(),
  );
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(await usageOf(name));
    return 0;
  }
  try {
    return await runCommand(command.command, rest, process.env);
  } catch (error) {
    // A usage mistake: the reason in one line, then where the usage is (not the whole of it,
    // which would scroll the reason away).
    const usage = error instanceof UsageError ? error.message : flagProblem(error, command.usage);
    if (usage !== undefined) {
      console.error(`decide ${name}: ${usage}\nsee: npx decide ${name} --help`);
      return 2;
    }
    if (error instanceof DecisionRuntimeError || error instanceof CommandError) {
      console.error(`decide ${name}: ${error.message}`);
      return 1;
    }
    const advice = adviceFor(error);
    if (advice && !debug) {
      console.error(`decide ${name}: ${advice}`);
      return 1;
    }
    throw error;
  }
}
