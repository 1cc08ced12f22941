/**
 * `npm run schemas`: writes the generated JSON Schemas to `events/schemas/` (one file per event
 * detail), for upstream teams to validate against. `test/unit/event-schemas.test.ts` fails when
 * the files and the zod schemas disagree.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventJsonSchemas } from "../../shared/domain/contracts/json-schemas.ts";

const folder = fileURLToPath(new URL("../../events/schemas", import.meta.url));
await mkdir(folder, { recursive: true });
for (const { name, schema } of eventJsonSchemas()) {
  await writeFile(join(folder, `${name}.json`), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`events/schemas/${name}.json`);
}
