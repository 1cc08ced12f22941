/**
 * Small helpers for command-line flags: typed numbers with ranges, and usage errors that the
 * entry point prints without a stack trace.
 */

/** A mistake in how a command was called; printed with the command's usage. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A command that could not finish for a reason a person can act on; printed without a stack trace, exit 1. */
export class CommandError extends Error {
  override name = "CommandError";
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
