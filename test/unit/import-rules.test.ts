/**
 * The import-rule check on small made-up trees: it finds a forbidden folder, a forbidden package
 * (however the import is spelled: type-only, re-export, dynamic), an unruled folder, and circles
 * between files and between top-level folders; a tree that keeps the rules passes.
 */
import { describe, expect, it } from "vitest";
import { cycles, importsOf, violations } from "../../infra/scripts/check-imports.ts";
import { IMPORT_RULES, ruleFor } from "../../infra/scripts/import-rules.ts";

const file = (path: string, ...imports: string[]) => ({ path, text: imports.join("\n") });

describe("import rules", () => {
  it("reads static, type-only, re-exported and dynamic imports", () => {
    const text = [
      'import { a } from "./a.ts";',
      'import type { B } from "../b.ts";',
      'export { c } from "./c.ts";',
      'export * from "./d.ts";',
      'const e = await import("./e.ts");',
      'import "./f.ts";',
      "// import { no } from './comment.ts';",
      "const s = \"from './string.ts'\";",
    ].join("\n");
    expect(importsOf({ path: "shared/x.ts", text })).toEqual([
      "./a.ts",
      "../b.ts",
      "./c.ts",
      "./d.ts",
      "./e.ts",
      "./f.ts",
    ]);
  });

  it("passes a tree that keeps the rules", () => {
    expect(
      violations([
        file("shared/domain/item.ts", 'import { z } from "zod";'),
        file("shared/use-cases/decide.ts", 'import type { Item } from "../domain/item.ts";'),
        file(
          "shared/adapters/sqs.ts",
          'import { SQSClient } from "@aws-sdk/client-sqs";',
          'import "../domain/item.ts";',
        ),
        file(
          "functions/decide.ts",
          'import "../shared/use-cases/decide.ts";',
          'import "../shared/adapters/sqs.ts";',
        ),
      ]),
    ).toEqual([]);
  });

  it("names each forbidden import with the rule it breaks", () => {
    const problems = violations([
      file("shared/domain/item.ts", 'import type { X } from "../adapters/sqs.ts";'),
      file("shared/adapters/sqs.ts", ""),
      file(
        "shared/use-cases/decide.ts",
        'export { Q } from "../adapters/sqs.ts";',
        'await import("@aws-sdk/client-sqs");',
      ),
      file("functions/decide.ts", 'import "../infra/topology.ts";'),
      file("infra/topology.ts", ""),
      file("docs/odd.ts", ""),
    ]);
    expect(problems).toEqual([
      "shared/domain/item.ts: ../adapters/sqs.ts (shared/domain/ may import no other folder)",
      "shared/use-cases/decide.ts: ../adapters/sqs.ts (shared/use-cases/ may import shared/domain, shared/reports)",
      "shared/use-cases/decide.ts: @aws-sdk/client-sqs (shared/use-cases/ never imports @aws-sdk/)",
      "functions/decide.ts: ../infra/topology.ts (functions/ may import shared)",
      "docs/odd.ts: no import rule covers this folder (infra/scripts/import-rules.ts)",
    ]);
  });

  it("finds circles between files and between top-level folders", () => {
    const problems = violations([
      file("endpoint/scorer/a.ts", 'import "./b.ts";'),
      file("endpoint/scorer/b.ts", 'import "./c.ts";'),
      file("endpoint/scorer/c.ts", 'import "./a.ts";'),
      file("cli/run.ts", 'import "../infra/local/mode.ts";'),
      file("infra/local/mode.ts", 'import "../../cli/args.ts";'),
      file("cli/args.ts", ""),
    ]);
    expect(problems).toContain(
      "import circle between files: endpoint/scorer/a.ts -> endpoint/scorer/b.ts -> endpoint/scorer/c.ts",
    );
    expect(problems).toContain("import circle between folders: cli -> infra");
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("applies the most specific folder's rule", () => {
    expect(ruleFor("infra/local/wiring.ts")?.folder).toBe("infra/local");
    expect(ruleFor("infra/app.ts")?.folder).toBe("infra");
    expect(ruleFor("test/unit/x.test.ts")).toBeUndefined();
    expect(Object.keys(IMPORT_RULES)).toContain("shared/domain");
  });
});
