/**
 * The `decide` command line: one entry, one module per command.
 */
import { DecisionRuntimeError } from "../endpoint/runtime/errors.ts";
import { CommandError, UsageError } from "./args.ts";

/** A command's module: its entry and its usage text. */
interface CommandModule {
  readonly run: (argv: string[]) => Promise<number>;
  readonly usage: string;
}

/**
 * Commands are loaded when invoked, so that `decide serve` in the container loads only the
 * endpoint (the local mode's stand-ins and their dev-only packages are not in the image).
 */
const COMMANDS: Record<
  string,
  { readonly what: string; readonly summary: string; readonly load: () => Promise<CommandModule> }
> = {
  "make-model": {
    what: "writes a generated GGUF model (tests, benchmarks, the demo)",
    summary: "decide make-model --shape <tiny|qwen2-0.5b|qwen2-1.5b|demo> --out <file.gguf>",
    load: async () => {
      const m = await import("./make-model.ts");
      return { run: m.makeModelCommand, usage: m.makeModelUsage };
    },
  },
  score: {
    what: "scores one decision on a local model and prints JSON",
    summary: "decide score --model <file.gguf> --input <decision.json | ->",
    load: async () => {
      const m = await import("./score.ts");
      return { run: m.scoreCommand, usage: m.scoreUsage };
    },
  },
  serve: {
    what: "runs the decision endpoint (System One, OpenAI chat, SageMaker)",
    summary: "decide serve --model <file.gguf | folder> [--port 8080] [--gpu auto|cuda|off]",
    load: async () => {
      const m = await import("./serve.ts");
      return { run: m.serveCommand, usage: m.serveUsage };
    },
  },
  local: {
    what: "runs the whole pipeline on this machine (npm start)",
    summary: "decide local [--model file.gguf] [--fresh] [--port-base N] (also npm start)",
    load: async () => {
      const m = await import("./local.ts");
      return { run: m.localCommand, usage: m.localUsage };
    },
  },
  publish: {
    what: "sends a file of items to the intake queue or the event bus",
    summary: "decide publish <file.jsonl | file.csv | -> (--queue-url URL | --event-bus NAME)",
    load: async () => {
      const m = await import("./publish.ts");
      return { run: m.publishCommand, usage: m.publishUsage };
    },
  },
  batch: {
    what: "submits a file as a batch job, follows it, writes its results",
    summary: "decide batch submit <file> --policy ID | status <id> [--watch] | results <id> --out F | list",
    load: async () => {
      const m = await import("./batch.ts");
      return { run: m.batchCommand, usage: m.batchUsage };
    },
  },
  status: {
    what: "counts records per state and policy, queues and dead letters",
    summary: "decide status [--table NAME] [--queue-url URL] [--dlq-url URL]",
    load: async () => {
      const m = await import("./status.ts");
      return { run: m.statusCommand, usage: m.statusUsage };
    },
  },
  replay: {
    what: "moves dead letters back to the intake queue, filtered or all",
    summary: "decide replay --dlq-url URL --queue-url URL [--policy ID] [--dry-run] | --all --dlq-arn ARN",
    load: async () => {
      const m = await import("./replay.ts");
      return { run: m.replayCommand, usage: m.replayUsage };
    },
  },
  calibrate: {
    what: "fits temperature and thresholds from labels; checks drift",
    summary:
      "decide calibrate --input labelled.jsonl --policy ID [--apply] | --check --baseline F --recent F",
    load: async () => {
      const m = await import("./calibrate.ts");
      return { run: m.calibrateCommand, usage: m.calibrateUsage };
    },
  },
  audit: {
    what: "estimates each policy's rate of wrong automatic actions from audit samples",
    summary: "decide audit --from-table TABLE [--policy ID] [--since YYYY-MM-DD]",
    load: async () => {
      const m = await import("./audit.ts");
      return { run: m.auditCommand, usage: m.auditUsage };
    },
  },
  "what-if": {
    what: "re-answers recent items under a candidate policy or model: what would change",
    summary:
      "decide what-if --candidate policy.json [--model F | --endpoint-name N | --url U] --from-table T",
    load: async () => {
      const m = await import("./what-if.ts");
      return { run: m.whatIfCommand, usage: m.whatIfUsage };
    },
  },
};

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return `Usage: decide <command> [flags]\n\nCommands:\n${Object.entries(COMMANDS)
    .map(
      ([name, command]) =>
        `  ${name.padEnd(width)}  ${command.what}\n  ${" ".repeat(width)}  ${command.summary}`,
    )
    .join("\n")}\n\nRun "decide <command> --help" for details; add --debug to see stack traces.`;
}

/** The known command closest to `name`, when it is a likely typo. */
function closest(name: string): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]!;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const current = row[j]!;
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = current;
      }
    }
    return row[b.length]!;
  };
  const [best] = Object.keys(COMMANDS)
    .map((command) => ({ command, d: distance(name, command) }))
    .sort((x, y) => x.d - y.d);
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.command : undefined;
}

/** Runs the CLI with `argv` (without node and script); returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes("--debug");
  const [name, ...rest] = argv.filter((arg) => arg !== "--debug");
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
    const guess = closest(name);
    console.error(
      `decide: unknown command "${name}"${guess ? `; did you mean "${guess}"?` : ""}\n\n${overview()}`,
    );
    return 2;
  }
  const command = await entry.load();
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(command.usage);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))
    ) {
      console.error(`decide ${name}: ${error.message}\n\n${command.usage}`);
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

/** The local stand-ins' default ports, to name the service behind a port in use. */
const LOCAL_PORTS: Record<number, string> = {
  8080: "the decision endpoint (--port)",
  8000: "DynamoDB Local",
  9324: "local SQS",
  9195: "the local event bus",
  8090: "the review page",
};

/**
 * One or two lines a person can act on for the errors a newcomer meets: nothing listening,
 * a port taken, no region or credentials. Undefined for anything else (printed with its stack).
 */
export function adviceFor(error: unknown): string | undefined {
  const chain: { name?: string; message?: string; code?: string; port?: number; address?: string }[] = [];
  for (let e = error as { cause?: unknown } | undefined; e && chain.length < 6; e = e.cause as typeof e) {
    chain.push(e as (typeof chain)[number]);
  }
  const text = chain.map((e) => `${e.name ?? ""} ${e.code ?? ""} ${e.message ?? ""}`).join(" ");
  // The local mode's own one-line refusal (a port another process holds).
  const portError = chain.find((e) => e.name === "PortInUseError");
  if (portError) return portError.message;
  const inUse = chain.find((e) => e.code === "EADDRINUSE");
  if (inUse) {
    const service = inUse.port !== undefined ? LOCAL_PORTS[inUse.port] : undefined;
    return `port ${inUse.port ?? "?"}${service ? ` (${service})` : ""} is already in use: is another \`npm start\` running? Stop it first.`;
  }
  if (/ECONNREFUSED|ENOTFOUND|socket hang up|connect ETIMEDOUT/.test(text)) {
    const refused = chain.find((e) => e.address !== undefined && e.port !== undefined);
    const where = refused ? ` at ${refused.address}:${refused.port}` : "";
    return (
      `could not reach the service${where} (nothing answered).\n` +
      "Is `npm start` running? In this terminal, export the variables it printed (or point the flags at AWS)."
    );
  }
  if (/Region is missing/i.test(text)) {
    return "no AWS region: set AWS_REGION (or --region), or export the variables `npm start` printed.";
  }
  if (/CredentialsProviderError|Could not load credentials/i.test(text)) {
    return "no AWS credentials: configure a profile (--profile) or export the variables `npm start` printed.";
  }
  return undefined;
}
