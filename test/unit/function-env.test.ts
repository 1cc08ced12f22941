/**
 * The functions' environment variable names are written once (`shared/domain/function-env.ts`):
 * the constructs that set them, the handlers that read them, the command line that reads the same
 * deployed outputs and the local mode that sets them use the constants, so no file under
 * `infra/constructs/`, `functions/`, `cli/` or `infra/local/` (sub-folders included) spells one
 * as a string, an object key or `env.NAME`. The command line's own names (`CLI_ENV`) likewise.
 * The container's names too (`shared/domain/container-env.ts`): its settings table, the endpoint
 * constructs and the command line read the constants.
 */
import { describe, expect, it } from "vitest";
import { CONTAINER_ENV } from "../../shared/domain/container-env.ts";
import { CLI_ENV, FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { codeOf, tsFiles } from "../helpers/source-files.ts";

const files = ["infra/constructs", "functions", "cli", "infra/local"].flatMap(tsFiles);

/** Each `name` spelt out as a string, an object key or `env.NAME` in `paths`, as "path: name". */
function speltOut(paths: readonly string[], names: readonly string[]): string[] {
  const spelt: string[] = [];
  for (const file of paths) {
    const text = codeOf(file);
    for (const name of names) {
      const literal = new RegExp(`"${name}"|^\\s*${name}:|[{,]\\s*${name}:|\\benv\\.${name}\\b`, "m");
      if (literal.test(text)) spelt.push(`${file}: ${name}`);
    }
  }
  return spelt;
}

describe("the functions' environment variable names", () => {
  it("are each their own constant", () => {
    for (const [key, name] of Object.entries(FUNCTION_ENV)) expect(name).toBe(key);
    expect(Object.keys(FUNCTION_ENV)).toContain("DECISIONS_TABLE");
    // One name per concept: which endpoint answers for a later-tier model is TIER_ENDPOINTS alone.
    expect(Object.keys(FUNCTION_ENV)).toContain("TIER_ENDPOINTS");
    expect(Object.keys(FUNCTION_ENV)).not.toContain("TIER_MODELS");
  });

  it("are never spelt out by the constructs, the handlers, the command line or the local mode", () => {
    expect(files).toContain("infra/constructs/async/async-lane.ts");
    expect(files).toContain("cli/batch/batch-context.ts");
    expect(speltOut(files, [...Object.keys(FUNCTION_ENV), ...Object.keys(CLI_ENV)])).toEqual([]);
  });

  it("of the command line alone are its own, none a function's too", () => {
    for (const [key, name] of Object.entries(CLI_ENV)) expect(name).toBe(key);
    expect(Object.keys(CLI_ENV)).toContain("DLQ_URL");
    expect(Object.keys(CLI_ENV).filter((name) => name in FUNCTION_ENV)).toEqual([]);
  });

  it("of the container are never spelt out by its settings table, the constructs or the command line", () => {
    const readers = [...files.filter((file) => !file.startsWith("functions/")), "endpoint/server/config.ts"];
    // Powertools' own variables are the library's: the constructs set them for the functions too.
    const ours = Object.keys(CONTAINER_ENV).filter((name) => !name.startsWith("POWERTOOLS_"));
    expect(speltOut(readers, ours)).toEqual([]);
    expect(Object.keys(CONTAINER_ENV)).toContain("DECIDE_EXTRA_MODELS");
  });
});
