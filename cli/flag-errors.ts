/**
 * Node's flag parser (`util.parseArgs`) explains a mistake in its own words ("Unknown option
 * '--queue'. To specify a positional argument starting with a '-', ..."). This turns those
 * errors into the command line's one-line style, with a "did you mean" among the flags the
 * command's usage text documents.
 */
import { closest } from "./suggest.ts";

/** The flags a usage text names (`--queue-url`, `--dry-run`, ...), each once. */
export function flagsOf(usage: string): string[] {
  return [...new Set(usage.match(/--[a-z][a-z0-9-]*/g) ?? [])];
}

/** The flag most likely meant by `given`: the only one it begins, else the closest spelling. */
export function likelyFlag(given: string, flags: readonly string[]): string | undefined {
  const name = given.replace(/^-+/, "");
  const names = flags.map((flag) => flag.replace(/^-+/, ""));
  const extended = names.filter((candidate) => candidate.startsWith(name));
  const guess = extended.length === 1 ? extended[0] : closest(name, names);
  return guess === undefined || guess === name ? undefined : `--${guess}`;
}

/** The one-line reason for a `util.parseArgs` error, or undefined when `error` is not one. */
export function flagProblem(error: unknown, usage: string): string | undefined {
  if (!(error instanceof TypeError) || !("code" in error)) return undefined;
  const quoted = /'([^']*)'/.exec(error.message)?.[1] ?? "";
  switch (error.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const guess = likelyFlag(quoted, flagsOf(usage));
      return `unknown flag ${quoted}${guess ? `; did you mean ${guess}?` : ""}`;
    }
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE": {
      const flag = /--[a-z0-9-]+/.exec(quoted)?.[0] ?? quoted;
      if (/does not take/.test(error.message)) return `${flag} takes no value`;
      // `--sample -5`: the parser takes "-5" for a flag, so the value seems missing.
      if (/ambiguous/.test(error.message))
        return `${flag} needs a value; for one that starts with "-", write ${flag}=-…`;
      return `${flag} needs a value`;
    }
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument "${quoted}"`;
    default:
      return undefined;
  }
}
