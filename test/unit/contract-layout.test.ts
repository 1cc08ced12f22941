/**
 * The System One contract is written once: the endpoint's server and scorer define no request
 * schema of their own (they take the contract's validated request), everything outside the
 * contract folder reaches it through its index (or its vocabulary, which imports nothing, so that
 * the policy schema can read it without a circle), and the scorer's files import each other without
 * a circle (letter-readout → prompt → request → option-order → question-pass → letter-readout was one).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/models.ts";

const CONTRACT = "shared/domain/contracts/system-one/";

function filesUnder(folder: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts"))
        out.push({ path: relative(REPO_ROOT, full), text: readFileSync(full, "utf8") });
    }
  };
  walk(join(REPO_ROOT, folder));
  return out;
}

/** Module specifiers of static imports and re-exports, type-only ones included. */
const importsOf = (text: string) =>
  [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
/** Where a relative specifier of `path` leads, from the repository root. */
const target = (path: string, specifier: string) =>
  relative(REPO_ROOT, resolve(REPO_ROOT, dirname(path), specifier));

describe("the System One contract, written once", () => {
  it("leaves endpoint/server/ and endpoint/scorer/ no request schema of their own", () => {
    const endpoint = [...filesUnder("endpoint/server"), ...filesUnder("endpoint/scorer")];
    expect(endpoint.length).toBeGreaterThan(15);
    const withSchemas = endpoint.filter((f) => importsOf(f.text).includes("zod")).map((f) => f.path);
    expect(withSchemas).toEqual([]);
    // ...and they take the contract's validated request.
    const scorer = readFileSync(join(REPO_ROOT, "endpoint/scorer/scorer.ts"), "utf8");
    expect(scorer).toMatch(/score\(request: DecisionRequest,/);
  });

  it("has a vocabulary that imports nothing", () => {
    const vocabulary = readFileSync(join(REPO_ROOT, CONTRACT, "vocabulary.ts"), "utf8");
    expect(vocabulary).toMatch(/export const QUESTION_TYPES/);
    expect(importsOf(vocabulary)).toEqual([]);
    expect(vocabulary).not.toMatch(/\bimport\s*\(/);
  });

  it("is reached through its index (or its vocabulary) from outside the folder", () => {
    const outside = ["cli", "endpoint", "functions", "infra", "shared", "test"].flatMap(filesUnder);
    const deep = outside
      .filter((f) => !f.path.startsWith(CONTRACT))
      .flatMap((f) =>
        importsOf(f.text)
          .filter((s) => s.startsWith("."))
          .map((s) => target(f.path, s))
          .filter((t) => t.startsWith(CONTRACT) && !/(index|vocabulary)\.ts$/.test(t))
          .map((t) => `${f.path}: ${t}`),
      );
    expect(deep).toEqual([]);
  });

  it("has no import circle among the scorer's files", () => {
    const files = filesUnder("endpoint/scorer");
    const graph = new Map(
      files.map((f) => [
        f.path,
        importsOf(f.text)
          .filter((s) => s.startsWith("./"))
          .map((s) => target(f.path, s)),
      ]),
    );
    const circles: string[] = [];
    const visit = (path: string, trail: string[]) => {
      if (trail.includes(path)) {
        circles.push([...trail.slice(trail.indexOf(path)), path].join(" -> "));
        return;
      }
      for (const next of graph.get(path) ?? []) if (trail.length < graph.size) visit(next, [...trail, path]);
    };
    for (const path of graph.keys()) visit(path, []);
    expect(circles).toEqual([]);
  });
});
