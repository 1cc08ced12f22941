/**
 * Regenerates events/items/demo-training.jsonl from events/items/demo-templates.json
 * (`npm run demo:training`); a unit test checks the committed file matches the templates.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  demoTrainingJsonl,
  evaluationStates,
  expandDemoTemplates,
  readDemoTemplates,
} from "../../endpoint/models/demo-training.ts";

const items = join(import.meta.dirname, "..", "..", "events", "items");
const rows = expandDemoTemplates(
  await readDemoTemplates(join(items, "demo-templates.json")),
  await evaluationStates(items),
);
await writeFile(join(items, "demo-training.jsonl"), demoTrainingJsonl(rows));
console.log(`wrote events/items/demo-training.jsonl: ${rows.length} rows`);
