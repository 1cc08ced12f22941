/**
 * The generated reference pages are current: docs/cli-reference.md is every command's `--help`
 * as the commands print it now, and docs/openapi.json the document the zod schemas give now
 * (`npm run reference` writes both). Each fails when a usage text or a schema changes without
 * the page; the OpenAPI document's references all resolve.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliReference } from "../../cli/reference.ts";
import { openApiDocument } from "../../endpoint/openapi/openapi.ts";
import { REPO_ROOT } from "../helpers/models.ts";

describe("the generated reference pages", () => {
  it("docs/cli-reference.md is the commands' own --help (npm run reference)", async () => {
    const page = await readFile(join(REPO_ROOT, "docs", "cli-reference.md"), "utf8");
    expect(page, "stale: run npm run reference").toBe(await cliReference());
    expect(page).toContain("## decide events");
  });

  it("docs/openapi.json is what the zod schemas generate (npm run reference)", async () => {
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const file = JSON.parse(await readFile(join(REPO_ROOT, "docs", "openapi.json"), "utf8"));
    expect(file, "stale: run npm run reference").toEqual(openApiDocument(version));
  });

  it("resolves every $ref of the OpenAPI document to a component", () => {
    const document = openApiDocument("0");
    const text = JSON.stringify(document);
    const schemas = (document.components as { schemas: Record<string, unknown> }).schemas;
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.filter((name) => !(name in schemas))).toEqual([]);
    expect(Object.values(schemas).every((schema) => schema && typeof schema === "object")).toBe(true);
  });
});
