/**
 * The command line's errors and small helpers for flags: typed numbers with ranges, required
 * flags, and settings that a flag or the variables `npm start` exports give.
 *
 * The error style, for every command: throw {@link UsageError} for a mistake in how the command
 * was called (the entry point prints `decide <command>: <message>`, then
 * `see: npx decide <command> --help`, and exits 2) and {@link CommandError} for a reason the
 * command could not finish that a person can act on (printed as `decide <command>: <message>`,
 * exit 1). Either message is one line that names what was wrong and what was needed; neither
 * prints a stack trace. Unknown flags and missing flag values get the same style (with a "did you
 * mean") from the entry point.
 *
 * @example throw new UsageError(`--bins must be an integer from 2 to 50, got "${value}"`);
 */
import type { CommandEnv } from "./command.ts";

/** A mistake in how a command was called: one line, then where the usage is; exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A command that could not finish for a reason a person can act on; printed without a stack trace, exit 1. */
export class CommandError extends Error {
  override name = "CommandError";
}

/** What to check when a variable that `npm start` writes into its env file is missing. */
export const START_HINT =
  "is npm start running? source the env file it wrote (source .cache/local/env) or pass --local-env FILE";

/** A setting that neither its flag nor the environment variable `npm start` exports gave. */
export class MissingSettingError extends UsageError {
  override name = "MissingSettingError";
  /** `flag` without its dashes; `alternative` another way to give it (`--event-bus NAME`). */
  constructor(
    readonly flag: string,
    readonly variable: string,
    alternative?: string,
  ) {
    super(
      `${variable} is not set and --${flag}${alternative ? ` (or ${alternative})` : ""} is not given: ${START_HINT}`,
    );
  }
}

/** `value` (a flag's), else the variable `variable` of `env`; throws {@link MissingSettingError}. */
export function settingFrom(
  flag: string,
  value: string | undefined,
  variable: string,
  env: CommandEnv,
): string {
  const found = value || env[variable];
  if (!found) throw new MissingSettingError(flag, variable);
  return found;
}

/** Parses an integer flag within `[min, max]`, or returns `fallback` when absent. */
export function integerFlag(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number;
export function integerFlag(
  name: string,
  value: string | undefined,
  fallback: undefined,
  min: number,
  max: number,
): number | undefined;
export function integerFlag(
  name: string,
  value: string | undefined,
  fallback: number | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return parsed;
}

/** Returns a required string flag or throws a usage error naming it. */
export function requiredFlag(name: string, value: string | undefined): string {
  if (value === undefined || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/**
 * `--since` as an ISO time: a date (YYYY-MM-DD) or an ISO date-time; `fallback` when absent. A
 * time after `now` is refused: its window holds nothing, and an empty answer would read as "all clear".
 */
export function sinceFlag(value: string | undefined, fallback: string, now: Date = new Date()): string {
  if (value === undefined) return fallback;
  const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(time))
    throw new UsageError(`--since must be a date (YYYY-MM-DD) or an ISO time, got "${value}"`);
  if (time > now.getTime())
    throw new UsageError(`--since ${value} is in the future: nothing was decided after it yet`);
  return new Date(time).toISOString();
}
