/**
 * One clock convention (issue 43, item 6): a dependency that reads the wall clock takes a `Clock`
 * (`shared/domain/clock.ts`), never a hand-written `() => Date` or an epoch-milliseconds
 * `() => number` named as a clock. A monotonic timer that measures durations
 * (`performance.now()`) is not a clock and is not looked for.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SOURCE_ROOTS } from "../../infra/scripts/import-rules.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { tsFiles } from "../helpers/source-files.ts";

/**
 * "path:line" for each clock written by hand: `() => Date`, or `now`/`clock` typed `() => number`
 * unless it defaults to `performance.now()`.
 */
function handWritten(paths: readonly string[]): string[] {
  const found: string[] = [];
  for (const path of paths) {
    const lines = readFileSync(join(REPO_ROOT, path), "utf8").split("\n");
    lines.forEach((line, i) => {
      // A monotonic timer's default names itself: `now: () => number = () => performance.now()`.
      const monotonic = /performance\.now\(\)/.test(line);
      const epoch = /\b(now|clock)\??:\s*\(\)\s*=>\s*number\b/.test(line) && !monotonic;
      if (/\(\)\s*=>\s*Date\b/.test(line) || epoch) found.push(`${path}:${i + 1}`);
    });
  }
  return found;
}

describe("the clock convention", () => {
  const sources = SOURCE_ROOTS.flatMap(tsFiles).filter((path) => path !== "shared/domain/clock.ts");

  it("reads the sources", () => {
    expect(sources).toContain("shared/use-cases/decide-message.ts");
  });

  it("has every dependency on the wall clock take a Clock", () => {
    expect(handWritten(sources)).toEqual([]);
  });

  it("finds a clock written by hand", () => {
    expect(handWritten(["test/unit/clock-convention.test.ts"]).length).toBeGreaterThan(0);
  });
});
