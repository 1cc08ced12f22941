/**
 * Node's flag parser errors in the command line's one-line style. Before, `--sample -5` was
 * answered "--sample needs a value", which reads as if no value had been given.
 */
import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { flagProblem } from "../../cli/flag-errors.ts";

const USAGE = "decide what-if --candidate F [--sample 500] [--dry-run]";

/** The one-line reason for `args` parsed against the usage's flags. */
function problem(args: string[]): string | undefined {
  try {
    parseArgs({
      args,
      options: { candidate: { type: "string" }, sample: { type: "string" }, "dry-run": { type: "boolean" } },
      strict: true,
    });
  } catch (error) {
    return flagProblem(error, USAGE);
  }
  return "parsed";
}

describe("flagProblem", () => {
  it("says how to give a value that starts with a dash", () => {
    expect(problem(["--sample", "-5"])).toBe(
      '--sample needs a value; for one that starts with "-", write --sample=-…',
    );
    expect(problem(["--sample"])).toBe("--sample needs a value");
  });

  it("names an unknown flag with the one meant, and a value given to a switch", () => {
    expect(problem(["--sampl", "5"])).toBe("unknown flag --sampl; did you mean --sample?");
    expect(problem(["--dry-run=yes"])).toBe("--dry-run takes no value");
    expect(problem(["extra"])).toBe('unexpected argument "extra"');
  });

  it("leaves other errors alone", () => {
    expect(flagProblem(new Error("boom"), USAGE)).toBeUndefined();
  });
});
