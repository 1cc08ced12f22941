/**
 * The Layout section (docs/development.md, moved there from the README) stays true: one row for
 * each folder the import rules name, showing that folder's rule as `infra/scripts/import-rules.ts`
 * writes it, and every path the table names exists in the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeRule, IMPORT_RULES, type RuledFolder } from "../../infra/scripts/import-rules.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** The rows of the Layout table: the paths of the first cell and the text of the third. */
function layoutRows(): { paths: string[]; rule: string }[] {
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
      return { paths, rule: (cells[2] ?? "").replace(/ \|$/, "").trim() };
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
