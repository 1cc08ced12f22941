/**
 * The `decide` command line: one entry, one module per command.
 */
import { DecisionRuntimeError } from "../endpoint/scorer/errors.ts";
import { UsageError } from "./args.ts";
import { calibrateCommand, calibrateUsage } from "./calibrate.ts";
import { localCommand, localUsage } from "./local.ts";
import { makeModelCommand, makeModelUsage } from "./make-model.ts";
import { publishCommand, publishUsage } from "./publish.ts";
import { replayCommand, replayUsage } from "./replay.ts";
import { scoreCommand, scoreUsage } from "./score.ts";
import { serveCommand, serveUsage } from "./serve.ts";
import { statusCommand, statusUsage } from "./status.ts";

interface Command {
  readonly run: (argv: string[]) => Promise<number>;
  readonly usage: string;
}

const COMMANDS: Record<string, Command> = {
  "make-model": { run: makeModelCommand, usage: makeModelUsage },
  score: { run: scoreCommand, usage: scoreUsage },
  serve: { run: serveCommand, usage: serveUsage },
  publish: { run: publishCommand, usage: publishUsage },
  replay: { run: replayCommand, usage: replayUsage },
  calibrate: { run: calibrateCommand, usage: calibrateUsage },
  status: { run: statusCommand, usage: statusUsage },
  local: { run: localCommand, usage: localUsage },
};

function overview(): string {
  return `Usage: decide <command> [flags]\n\nCommands:\n${Object.values(COMMANDS)
    .map((command) => `  ${command.usage.split("\n")[0]}`)
    .join("\n")}\n\nRun "decide <command> --help" for details.`;
}

/** Runs the CLI with `argv` (without node and script); returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    console.log(overview());
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`decide: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
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
