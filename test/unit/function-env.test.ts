/**
 * The functions' environment variable names are written once (`shared/domain/function-env.ts`):
 * the constructs that set them and the handlers that read them use the constants, so no file
 * under `infra/constructs/` or `functions/` spells one as a string, an object key or `env.NAME`.
 * The container's names likewise (`shared/domain/container-env.ts`): its settings table and the
 * endpoint constructs read the constants.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONTAINER_ENV } from "../../shared/domain/container-env.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";

const ROOT = join(import.meta.dirname, "../..");

/** The code of a TypeScript file, comments dropped. */
function code(path: string): string {
  return readFileSync(join(ROOT, path), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}

const files = ["infra/constructs", "functions"].flatMap((folder) =>
  readdirSync(join(ROOT, folder))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `${folder}/${name}`),
);

/** Each `name` spelt out as a string, an object key or `env.NAME` in `paths`, as "path: name". */
function speltOut(paths: readonly string[], names: readonly string[]): string[] {
  const spelt: string[] = [];
  for (const file of paths) {
    const text = code(file);
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
  });

  it("are never spelt out by the constructs or the handlers", () => {
    expect(speltOut(files, Object.keys(FUNCTION_ENV))).toEqual([]);
  });

  it("of the container are never spelt out by its settings table or the constructs", () => {
    const readers = [...files.filter((file) => file.startsWith("infra/")), "endpoint/server/config.ts"];
    // Powertools' own variables are the library's: the constructs set them for the functions too.
    const ours = Object.keys(CONTAINER_ENV).filter((name) => !name.startsWith("POWERTOOLS_"));
    expect(speltOut(readers, ours)).toEqual([]);
    expect(Object.keys(CONTAINER_ENV)).toContain("DECIDE_EXTRA_MODELS");
  });
});
