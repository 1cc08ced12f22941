/**
 * The move script (infra/scripts/move-files.ts, issue 43 item 3) keeps every reference true: a file
 * added after the rules were written follows its siblings, relative specifiers are rewritten both
 * in a moved file and to it (imports, `vi.mock`, `new URL(..., import.meta.url)`, type imports),
 * cited paths in text follow, and the layout edits are done once however often it runs.
 */
import { describe, expect, it } from "vitest";
import { destination, rewriteCitations, rewriteSpecifiers } from "../../infra/scripts/move-files.ts";
import { withLayoutRows, withReportsRule } from "../../infra/scripts/move-layout.ts";

const moves = new Map([
  ["cli/calibrate-plan.ts", "cli/calibrate/calibrate-plan.ts"],
  ["shared/domain/calibration/report-style.ts", "shared/reports/report-style.ts"],
  ["infra/constructs/decision-endpoint.ts", "infra/constructs/endpoint/decision-endpoint.ts"],
]);

describe("destination", () => {
  it("sends a file by rule, a new sibling too, and leaves other files", () => {
    expect(destination("cli/calibrate.ts")).toBe("cli/calibrate/calibrate.ts");
    expect(destination("cli/calibrate-someday.ts")).toBe("cli/calibrate/calibrate-someday.ts");
    expect(destination("shared/domain/calibration/report-cascade.ts")).toBe(
      "shared/reports/calibration-report-cascade.ts",
    );
    expect(destination("infra/constructs/async-alarms.ts")).toBe("infra/constructs/async/async-alarms.ts");
    expect(destination("infra/constructs/dead-letter-alarms.ts")).toBe(
      "infra/constructs/operations/dead-letter-alarms.ts",
    );
    expect(destination("cli/main.ts")).toBeUndefined();
    expect(destination("functions/decide.ts")).toBeUndefined();
  });
});

describe("rewriteSpecifiers", () => {
  it("rewrites the specifiers of a moved file and those that point to a moved file", () => {
    const moved = [
      'import { a } from "../shared/domain/calibration/report-style.ts";',
      'import { b } from "./args.ts";',
      'import type { C } from "./calibrate-plan.ts";',
      'const m = await import("../infra/constructs/decision-endpoint.ts");',
    ].join("\n");
    expect(rewriteSpecifiers("cli/calibrate-plan.ts", "cli/calibrate/calibrate-plan.ts", moved, moves)).toBe(
      [
        'import { a } from "../../shared/reports/report-style.ts";',
        'import { b } from "../args.ts";',
        'import type { C } from "./calibrate-plan.ts";',
        'const m = await import("../../infra/constructs/endpoint/decision-endpoint.ts");',
      ].join("\n"),
    );
    const test = [
      'vi.mock("../../cli/calibrate-plan.ts");',
      'type T = import("../../shared/domain/calibration/report-style.ts").T;',
      'import { x } from "node:fs";',
    ].join("\n");
    expect(rewriteSpecifiers("test/unit/x.test.ts", "test/unit/x.test.ts", test, moves)).toBe(
      [
        'vi.mock("../../cli/calibrate/calibrate-plan.ts");',
        'type T = import("../../shared/reports/report-style.ts").T;',
        'import { x } from "node:fs";',
      ].join("\n"),
    );
  });

  it("rewrites a moved file's URLs relative to itself, and no other string", () => {
    const text = [
      'const root = fileURLToPath(new URL("../..", import.meta.url));',
      'const own = new URL("Beside.java", import.meta.url);',
      'const label = "../..";',
    ].join("\n");
    const out = rewriteSpecifiers(
      "infra/constructs/decision-endpoint.ts",
      "infra/constructs/endpoint/decision-endpoint.ts",
      text,
      moves,
    );
    expect(out).toContain('new URL("../../..", import.meta.url)');
    expect(out).toContain('new URL("../Beside.java", import.meta.url)');
    expect(out).toContain('const label = "../..";');
  });
});

describe("rewriteCitations", () => {
  it("rewrites whole paths, relative links and tails under a shared folder, not longer paths", () => {
    const text = [
      "see `cli/calibrate-plan.ts` and [the style](../shared/domain/calibration/report-style.ts)",
      "the endpoint (`constructs/decision-endpoint.ts`)",
      "not `vendor/cli/calibrate-plan.ts` nor `cli/calibrate-plan.tsx`",
    ].join("\n");
    expect(rewriteCitations(text, moves)).toBe(
      [
        "see `cli/calibrate/calibrate-plan.ts` and [the style](../shared/reports/report-style.ts)",
        "the endpoint (`constructs/endpoint/decision-endpoint.ts`)",
        "not `vendor/cli/calibrate-plan.ts` nor `cli/calibrate-plan.tsx`",
      ].join("\n"),
    );
  });
});

describe("the layout edits", () => {
  const rules = [
    "export const IMPORT_RULES = {",
    '  "shared/domain": { may: [] },',
    '  "shared/adapters": { may: ["shared/domain"] },',
    '  "shared/use-cases": { may: ["shared/domain"] },',
    '  "shared/pages": { may: ["shared/domain", "shared/use-cases"] },',
    "};",
  ].join("\n");

  it("adds the presentation room's rule once", () => {
    const once = withReportsRule(rules);
    expect(once).toContain('"shared/reports": { may: ["shared/domain"]');
    expect(once).toContain('"shared/use-cases": { may: ["shared/domain", "shared/reports"] }');
    expect(once).toContain(
      '"shared/pages": { may: ["shared/domain", "shared/use-cases", "shared/reports"] }',
    );
    expect(withReportsRule(once)).toBe(once);
  });

  it("adds the room's row and names new sub-folders once, with each rule written again", () => {
    const guide = [
      "## Layout",
      "| `shared/domain/` | pure domain | old rule |",
      "| `shared/adapters/` | every SDK import | old rule |",
      "| `docs/` | guides | |",
    ].join("\n");
    const described = (rule: { may: readonly string[] }) => `may import ${rule.may.join(", ")}`;
    const folders = {
      "shared/domain": { may: [] },
      "shared/reports": { may: ["a"] },
      "shared/adapters": { may: ["b"] },
    };
    const once = withLayoutRows(guide, folders, described);
    const lines = once.split("\n");
    expect(lines[2]).toMatch(/^\| `shared\/reports\/` \| presentation.* \| may import a \|$/);
    expect(lines[3]).toContain("`dynamodb/`");
    expect(lines[3]).toMatch(/ \| may import b \|$/);
    expect(lines[4]).toBe("| `docs/` | guides | |");
    expect(withLayoutRows(once, folders, described)).toBe(once);
  });
});
