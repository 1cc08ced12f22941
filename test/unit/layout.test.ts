/**
 * The layout shows the architecture, and these checks keep it so: the AWS SDK is reached only
 * through `shared/adapters/` (tests may use it directly: they are clients of the services), the
 * pure domain depends on nothing outside itself, the decision runtime does not depend on the
 * scorer built on it, and no source file grows past the size a reader can hold.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/models.ts";

const SOURCE_FOLDERS = ["bin", "cli", "endpoint", "functions", "infra", "shared"];

function sourceFiles(): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js)$/.test(entry.name))
        files.push({ path: relative(REPO_ROOT, full), text: readFileSync(full, "utf8") });
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(join(REPO_ROOT, folder));
  return files;
}

/** Module specifiers of static and dynamic imports and re-exports. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)["']([^"']+)["']/gm)].map((m) => m[1]!);
}

const files = sourceFiles();

describe("layout", () => {
  it("finds the source files", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("imports the AWS SDK only in shared/adapters/", () => {
    // The scan sees SDK imports where they belong, so an empty list below means something.
    expect(
      files.filter((f) => importsOf(f.text).some((s) => s.startsWith("@aws-sdk/"))).length,
    ).toBeGreaterThan(3);
    const offenders = files
      .filter((f) => !f.path.startsWith("shared/adapters/"))
      .flatMap((f) =>
        importsOf(f.text)
          .filter((s) => s.startsWith("@aws-sdk/"))
          .map((s) => `${f.path}: ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it("keeps shared/domain/ pure: no adapters, use cases, pages, functions or infrastructure", () => {
    const offenders = files
      .filter((f) => f.path.startsWith("shared/domain/"))
      .flatMap((f) =>
        importsOf(f.text)
          .filter(
            (s) => /(adapters|use-cases|pages|functions|infra|cli)\//.test(s) || s.startsWith("@aws-sdk/"),
          )
          .map((s) => `${f.path}: ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it("keeps use cases off the SDK and the web: they reach the world through ports", () => {
    const offenders = files
      .filter((f) => f.path.startsWith("shared/use-cases/"))
      .flatMap((f) =>
        importsOf(f.text)
          .filter((s) => /(pages|functions|infra|cli)\//.test(s) || s === "hono")
          .map((s) => `${f.path}: ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it("has no import loop between the runtime and the scorer", () => {
    const offenders = files
      .filter((f) => f.path.startsWith("endpoint/runtime/"))
      .flatMap((f) =>
        importsOf(f.text)
          .filter((s) => s.includes("scorer/"))
          .map((s) => `${f.path}: ${s}`),
      );
    expect(offenders).toEqual([]);
  });

  it("keeps every source file under 330 lines", () => {
    const long = files
      .map((f) => ({ path: f.path, lines: f.text.split("\n").length }))
      .filter((f) => f.lines > 330)
      .map((f) => `${f.path}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
