/**
 * The functions' environment variable names are written once (`shared/domain/function-env.ts`):
 * the constructs that set them and the handlers that read them use the constants, so no file
 * under `infra/constructs/` or `functions/` spells one as a string, an object key or `env.NAME`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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

describe("the functions' environment variable names", () => {
  it("are each their own constant", () => {
    for (const [key, name] of Object.entries(FUNCTION_ENV)) expect(name).toBe(key);
    expect(Object.keys(FUNCTION_ENV)).toContain("DECISIONS_TABLE");
  });

  it("are never spelt out by the constructs or the handlers", () => {
    const spelt: string[] = [];
    for (const file of files) {
      const text = code(file);
      for (const name of Object.keys(FUNCTION_ENV)) {
        const literal = new RegExp(`"${name}"|^\\s*${name}:|[{,]\\s*${name}:|\\benv\\.${name}\\b`, "m");
        if (literal.test(text)) spelt.push(`${file}: ${name}`);
      }
    }
    expect(spelt).toEqual([]);
  });
});
