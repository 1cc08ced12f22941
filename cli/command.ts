/**
 * The shape of every `decide` command, in three steps that can each be called alone:
 * `parse(argv, env)` turns the flags and the environment variables `npm start` exports into
 * validated options (synchronous, no I/O: a mistake is a `UsageError` before anything starts);
 * `run(options, io)` does the work and returns what it found, printing nothing of it (lines it
 * writes as it goes, such as progress on stderr, go through `io`); `print(result, options)`
 * formats the result (JSON with `--json`) and chooses the exit code. The entry point
 * (`main.ts`) composes them with `process.env` and the console.
 *
 * A command that runs until a signal (`local`, `serve`) has no print step: it has no result to
 * format, only what it writes while it runs, and its exit code is how it stopped.
 */

/** The environment a command reads (`process.env` from the entry point, any object in a test). */
export type CommandEnv = Readonly<Record<string, string | undefined>>;

/** Where a command writes while it runs. */
export interface CommandIo {
  /** A line on stdout written as the work goes (a step that a person follows), before the result. */
  readonly say: (line: string) => void;
  /** A line on stderr: refused input, notes, what to do after an interruption. */
  readonly note: (line: string) => void;
  /** The stream progress is drawn on: redrawn in place when it is a terminal, plain lines otherwise. */
  readonly progress: NodeJS.WriteStream;
}

/** What a print step returns. */
export interface Printed {
  /** The lines for stdout (none: nothing is written). */
  readonly lines: readonly string[];
  readonly exitCode: number;
  /** A failure to report once the lines are written (the entry point maps it to its exit code). */
  readonly error?: Error;
}

/** A command that finishes: parse, run, print. */
export interface OneShotCommand<Options, Result> {
  parse(argv: string[], env: CommandEnv): Options;
  run(options: Options, io: CommandIo): Promise<Result>;
  print(result: Result, options: Options): Printed;
}

/** A command that runs until a signal: parse, then run, which returns the exit code. */
export interface LongRunningCommand<Options> {
  parse(argv: string[], env: CommandEnv): Options;
  run(options: Options, io: CommandIo): Promise<number>;
}

/** Either kind of command. */
export type Command<Options = unknown, Result = unknown> =
  | OneShotCommand<Options, Result>
  | LongRunningCommand<Options>;

/** The console as a command's io. */
export const CONSOLE_IO: CommandIo = {
  say: (line) => console.log(line),
  note: (line) => console.error(line),
  progress: process.stderr,
};

/** Runs `command` on `argv` and `env`: parse, run, then write what print returns; the exit code. */
export async function runCommand<Options, Result>(
  command: Command<Options, Result>,
  argv: string[],
  env: CommandEnv,
  io: CommandIo = CONSOLE_IO,
): Promise<number> {
  const options = command.parse(argv, env);
  if (!("print" in command)) return command.run(options, io);
  const printed = command.print(await command.run(options, io), options);
  if (printed.lines.length > 0) io.say(printed.lines.join("\n"));
  if (printed.error) throw printed.error;
  return printed.exitCode;
}

/** The printed JSON of `value`, as every `--json` writes it. */
export function jsonLines(value: unknown, exitCode = 0): Printed {
  return { lines: [JSON.stringify(value, null, 2)], exitCode };
}
