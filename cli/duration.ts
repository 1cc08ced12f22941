/**
 * Durations on the command line: `90s`, `30m`, `2h`, `1d` (and `ms`).
 */
import { UsageError } from "./args.ts";

/** Parses 90s, 30m, 2h, 1d into milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new UsageError(`--${flag} must look like 90s, 30m, 2h or 1d, got "${text}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as "ms" | "s" | "m" | "h" | "d"
  ];
  return Number(match[1]) * unit;
}
