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

/** "file: specifier" for each import of a file under `folder` that `forbidden` flags. */
function offenders(
  folder: string | ((path: string) => boolean),
  forbidden: (specifier: string) => boolean,
): string[] {
  const inFolder = typeof folder === "string" ? (path: string) => path.startsWith(folder) : folder;
  return files
    .filter((f) => inFolder(f.path))
    .flatMap((f) =>
      importsOf(f.text)
        .filter(forbidden)
        .map((s) => `${f.path}: ${s}`),
    );
}

describe("layout", () => {
  it("finds the source files", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("imports the AWS SDK only in shared/adapters/", () => {
    // The scan sees SDK imports where they belong, so an empty list below means something.
    expect(
      files.filter((f) => importsOf(f.text).some((s) => s.startsWith("@aws-sdk/"))).length,
    ).toBeGreaterThan(3);
    const outside = (path: string) => !path.startsWith("shared/adapters/");
    expect(offenders(outside, (s) => s.startsWith("@aws-sdk/"))).toEqual([]);
  });

  it("keeps shared/domain/ pure: no adapters, use cases, pages, functions or infrastructure", () => {
    const layered = (s: string) =>
      /(adapters|use-cases|pages|functions|infra|cli)\//.test(s) || s.startsWith("@aws-sdk/");
    expect(offenders("shared/domain/", layered)).toEqual([]);
  });

  it("keeps use cases off the SDK and the web: they reach the world through ports", () => {
    expect(
      offenders("shared/use-cases/", (s) => /(pages|functions|infra|cli)\//.test(s) || s === "hono"),
    ).toEqual([]);
  });

  it("has no import loop between the runtime and the scorer", () => {
    expect(offenders("endpoint/runtime/", (s) => s.includes("scorer/"))).toEqual([]);
  });

  it("keeps every source file under 330 lines", () => {
    const long = files
      .map((f) => ({ path: f.path, lines: f.text.split("\n").length }))
      .filter((f) => f.lines > 330)
      .map((f) => `${f.path}: ${f.lines} lines`);
    expect(long).toEqual([]);
  });
});
