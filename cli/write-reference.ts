/**
 * `npm run reference` (its first half): writes docs/cli-reference.md from the commands' own usage
 * texts (`cli/reference.ts`).
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { cliReference } from "./reference.ts";

const page = fileURLToPath(new URL("../docs/cli-reference.md", import.meta.url));
await writeFile(page, await cliReference());
console.log("docs/cli-reference.md");
