/**
 * The `decide` command line: one entry, one module per command.
 */
import { DecisionRuntimeError } from "../endpoint/scorer/errors.ts";
import { UsageError } from "./args.ts";

/** A command's module: its entry and its usage text. */
interface CommandModule {
  readonly run: (argv: string[]) => Promise<number>;
  readonly usage: string;
}

/**
 * Commands are loaded when invoked, so that `decide serve` in the container loads only the
 * endpoint (the local mode's stand-ins and their dev-only packages are not in the image).
 */
const COMMANDS: Record<string, { readonly summary: string; readonly load: () => Promise<CommandModule> }> = {
  "make-model": {
    summary: "decide make-model --shape <tiny|qwen2-0.5b|qwen2-1.5b> --out <file.gguf>",
    load: async () => {
      const m = await import("./make-model.ts");
      return { run: m.makeModelCommand, usage: m.makeModelUsage };
    },
  },
  score: {
    summary: "decide score --model <file.gguf> --input <decision.json | ->",
    load: async () => {
      const m = await import("./score.ts");
      return { run: m.scoreCommand, usage: m.scoreUsage };
    },
  },
  serve: {
    summary: "decide serve --model <file.gguf | folder> [--port 8080] [--gpu auto|cuda|off]",
    load: async () => {
      const m = await import("./serve.ts");
      return { run: m.serveCommand, usage: m.serveUsage };
    },
  },
  local: {
    summary: "decide local [--model file.gguf] [--fresh] (also npm start)",
    load: async () => {
      const m = await import("./local.ts");
      return { run: m.localCommand, usage: m.localUsage };
    },
  },
  publish: {
    summary: "decide publish <file.jsonl | file.csv | -> (--queue-url URL | --event-bus NAME)",
    load: async () => {
      const m = await import("./publish.ts");
      return { run: m.publishCommand, usage: m.publishUsage };
    },
  },
  status: {
    summary: "decide status --table NAME [--queue-url URL] [--dlq-url URL]",
    load: async () => {
      const m = await import("./status.ts");
      return { run: m.statusCommand, usage: m.statusUsage };
    },
  },
  replay: {
    summary: "decide replay --dlq-url URL --queue-url URL [--policy ID] [--dry-run] | --all --dlq-arn ARN",
    load: async () => {
      const m = await import("./replay.ts");
      return { run: m.replayCommand, usage: m.replayUsage };
    },
  },
  calibrate: {
    summary:
      "decide calibrate --input labelled.jsonl --policy ID [--apply] | --check --baseline F --recent F",
    load: async () => {
      const m = await import("./calibrate.ts");
      return { run: m.calibrateCommand, usage: m.calibrateUsage };
    },
  },
};

function overview(): string {
  return `Usage: decide <command> [flags]\n\nCommands:\n${Object.values(COMMANDS)
    .map((command) => `  ${command.summary}`)
    .join("\n")}\n\nRun "decide <command> --help" for details.`;
}

/** Runs the CLI with `argv` (without node and script); returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    console.log(overview());
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    console.error(`decide: unknown command "${name}"\n\n${overview()}`);
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
    if (error instanceof DecisionRuntimeError) {
      console.error(`decide ${name}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
