/**
 * `npm run reference` (its second half): writes docs/openapi.json, the decision endpoint's HTTP
 * API generated from its zod schemas (`endpoint/openapi/openapi.ts`).
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "../../endpoint/openapi/openapi.ts";

const root = new URL("../../", import.meta.url);
const { version } = JSON.parse(await readFile(new URL("package.json", root), "utf8")) as { version: string };
await writeFile(
  fileURLToPath(new URL("docs/openapi.json", root)),
  `${JSON.stringify(openApiDocument(version), null, 2)}\n`,
);
console.log("docs/openapi.json");
