/**
 * The Layout section (docs/development.md, moved there from the README) stays true: one row for
 * each folder the import rules name, showing that folder's rule as `infra/scripts/import-rules.ts`
 * writes it, and every path the table names exists in the repository. Its "holds" column is read
 * too (issue 43, item 4: it had drifted, missing handlers, ports and folders): every sub-folder
 * that holds source is named in its folder's row, every Lambda handler of `functions/` (a file
 * that exports `handler`) is named there with their count, and every port an adapter implements
 * is named in the `shared/domain/` row. It is the one folder table (architecture.md links to it).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  describeRule,
  IMPORT_RULES,
  type RuledFolder,
  ruleFor,
  SOURCE_ROOTS,
} from "../../infra/scripts/import-rules.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** The rows of the Layout table: the paths of the first cell, the text of the second and third. */
function layoutRows(): { paths: string[]; holds: string; rule: string }[] {
  const guide = readFileSync(join(REPO_ROOT, "docs", "development.md"), "utf8");
  const start = guide.indexOf("\n## Layout\n");
  expect(start, "docs/development.md has a Layout section").toBeGreaterThan(0);
  const section = guide.slice(start);
  const end = section.indexOf("\n## ", 1);
  return (end > 0 ? section.slice(0, end) : section)
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split(" | ");
      const paths = [...cells[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      return { paths, holds: cells[1] ?? "", rule: (cells[2] ?? "").replace(/ \|$/, "").trim() };
    });
}

describe("the Layout section of docs/development.md", () => {
  it("has one row per ruled folder, with the rule check:imports enforces", () => {
    const rows = layoutRows();
    for (const folder of Object.keys(IMPORT_RULES) as RuledFolder[]) {
      const row = rows.find((r) => r.paths.length === 1 && r.paths[0] === `${folder}/`);
      expect(row, `a row for ${folder}/`).toBeDefined();
      expect(row!.rule, folder).toBe(describeRule(IMPORT_RULES[folder]));
    }
  });

  it("names only paths that exist", () => {
    const paths = layoutRows().flatMap((r) => r.paths);
    expect(paths.length).toBeGreaterThan(Object.keys(IMPORT_RULES).length);
    expect(paths.filter((path) => !existsSync(join(REPO_ROOT, path)))).toEqual([]);
  });
});

/** The "holds" cell of the row for `folder`. */
function holdsOf(folder: string): string {
  const row = layoutRows().find((r) => r.paths.length === 1 && r.paths[0] === `${folder}/`);
  expect(row, `a row for ${folder}/`).toBeDefined();
  return row!.holds;
}

/** What a cell names in backticks. */
const named = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

const SOURCE = /\.(ts|js|java)$/;

/** Every folder under the source roots that holds a source file directly. */
function sourceFolders(folder: string): string[] {
  const entries = readdirSync(join(REPO_ROOT, folder), { withFileTypes: true });
  const own = entries.some((e) => e.isFile() && SOURCE.test(e.name)) ? [folder] : [];
  return [
    ...own,
    ...entries.filter((e) => e.isDirectory()).flatMap((e) => sourceFolders(`${folder}/${e.name}`)),
  ];
}

describe("the holds column of the Layout table", () => {
  it("names every sub-folder that holds source in its folder's row", () => {
    const missing = SOURCE_ROOTS.flatMap((root) => sourceFolders(root)).filter((folder) => {
      const ruled = ruleFor(`${folder}/x.ts`)?.folder;
      if (ruled === undefined) return true;
      if (ruled === folder) return false; // its own row, checked above
      const sub = `${folder.slice(ruled.length + 1)}/`;
      return !named(holdsOf(ruled)).some((name) => name.startsWith(sub));
    });
    expect(missing, "folders with source the table does not name").toEqual([]);
  });

  it("names every Lambda handler of functions/, with their count", () => {
    const handlers = readdirSync(join(REPO_ROOT, "functions"))
      .filter((name) => name.endsWith(".ts"))
      .filter((name) =>
        /^export (const|(async )?function) handler\b/m.test(
          readFileSync(join(REPO_ROOT, "functions", name), "utf8"),
        ),
      );
    expect(handlers.length).toBeGreaterThan(10);
    const holds = holdsOf("functions");
    expect(handlers.filter((name) => !named(holds).includes(name))).toEqual([]);
    expect(holds).toContain(`${handlers.length} Lambda handlers`);
  });

  it("names every port an adapter implements in the shared/domain/ row", () => {
    const domainInterfaces = new Set(
      sourceFolders("shared/domain").flatMap((folder) =>
        readdirSync(join(REPO_ROOT, folder))
          .filter((name) => name.endsWith(".ts"))
          .flatMap((name) =>
            [
              ...readFileSync(join(REPO_ROOT, folder, name), "utf8").matchAll(/^export interface (\w+)/gm),
            ].map((m) => m[1]!),
          ),
      ),
    );
    const implemented = new Set(
      ["shared/adapters", "infra/local"].flatMap(sourceFolders).flatMap((folder) =>
        readdirSync(join(REPO_ROOT, folder))
          .filter((name) => name.endsWith(".ts"))
          .flatMap((name) =>
            [
              ...readFileSync(join(REPO_ROOT, folder, name), "utf8").matchAll(
                /\bimplements ([\w, ]+?)\s*\{/g,
              ),
            ].flatMap((m) => m[1]!.split(",").map((n) => n.trim())),
          ),
      ),
    );
    const ports = [...implemented].filter((name) => domainInterfaces.has(name));
    expect(ports.length).toBeGreaterThan(5);
    const holds = named(holdsOf("shared/domain"));
    expect(ports.filter((port) => !holds.includes(port))).toEqual([]);
  });
});
