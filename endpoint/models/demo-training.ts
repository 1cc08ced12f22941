/**
 * The demo model's training set, generated from templates (events/items/demo-templates.json): each
 * template of a policy's option is filled several times with random slot values, so the fitted
 * model sees many phrasings of every option rather than 50 hand-written lines. Deterministic: the
 * templates' seed gives the same rows on every machine.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { SeededRandom } from "../../shared/domain/random.ts";

/** One training row, as stored in events/items/demo-training.jsonl. */
export interface DemoTrainingRow {
  readonly policy: string;
  readonly label: string;
  readonly state: unknown;
}

const templatesSchema = z.object({
  seed: z.number().int(),
  fillsPerTemplate: z.number().int().positive(),
  slots: z.record(z.string(), z.array(z.unknown()).nonempty()),
  policies: z.record(z.string(), z.record(z.string(), z.array(z.unknown()).nonempty())),
});

/** The templates file, validated. */
export type DemoTemplates = z.infer<typeof templatesSchema>;

/** Reads and validates a templates file. */
export async function readDemoTemplates(path: string): Promise<DemoTemplates> {
  const parsed = templatesSchema.safeParse(JSON.parse(await readFile(path, "utf8")));
  if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

const WHOLE_SLOT = /^\{([a-z_]+)\}$/;
const SLOT = /\{([a-z_]+)\}/g;

/** The files whose items must never be training rows: the held-back and the two dev files. */
export const EVALUATION_FILES = ["demo-heldout.jsonl", "demo-dev.jsonl", "demo-dev2.jsonl"] as const;

/** How a state is compared with the evaluation items: its JSON, in lower case. */
export function stateKey(state: unknown): string {
  return JSON.stringify(state).toLowerCase();
}

/** The keys of every state in the evaluation files under `itemsDir`. */
export async function evaluationStates(itemsDir: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const file of EVALUATION_FILES)
    for (const line of (await readFile(join(itemsDir, file), "utf8")).split("\n"))
      if (line.trim()) keys.add(stateKey((JSON.parse(line) as { state: unknown }).state));
  return keys;
}

/**
 * Expands every template `fillsPerTemplate` times, in file order. A label key such as
 * "billing+account" marks mixed items: each fill is emitted once under every one of its labels,
 * which teaches the model to be unsure between them. A fill equal to an item of `exclude`
 * (keys from {@link evaluationStates}) is dropped, so an evaluation item is never trained on
 * however the slots fall; its draws are still made, so the other rows stay the same.
 */
export function expandDemoTemplates(
  templates: DemoTemplates,
  exclude: ReadonlySet<string> = new Set(),
): DemoTrainingRow[] {
  const random = new SeededRandom(templates.seed);
  const pick = (slot: string): unknown => {
    const values = templates.slots[slot];
    if (!values) throw new Error(`demo templates: unknown slot {${slot}}`);
    return values[random.nextUint32() % values.length];
  };
  const fill = (template: unknown): unknown => {
    if (typeof template === "string") {
      const whole = WHOLE_SLOT.exec(template);
      if (whole) return pick(whole[1]!);
      return template.replace(SLOT, (_, slot: string) => String(pick(slot)));
    }
    if (Array.isArray(template)) return template.map(fill);
    if (template && typeof template === "object")
      return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, fill(value)]));
    return template;
  };
  const rows: DemoTrainingRow[] = [];
  for (const [policy, labels] of Object.entries(templates.policies))
    for (const [label, list] of Object.entries(labels))
      for (const template of list)
        for (let n = 0; n < templates.fillsPerTemplate; n++) {
          const state = fill(template);
          if (exclude.has(stateKey(state))) continue;
          for (const one of label.split("+")) rows.push({ policy, label: one, state });
        }
  return rows;
}

/** The rows as JSON lines (the committed training file's exact text). */
export function demoTrainingJsonl(rows: readonly DemoTrainingRow[]): string {
  return rows
    .map((row) => JSON.stringify(row))
    .join("\n")
    .concat("\n");
}
