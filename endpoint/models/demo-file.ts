/**
 * The demo models on disk, made once per content: the file name carries a hash of the training
 * rows, the policies and the code that builds it, so a changed training set or policy is
 * refitted instead of an old file being reused silently. Parallel writers (test files, two local
 * modes) each write a private temporary file and rename it into place.
 *
 * Two demo models: `demo`, fitted on the committed training file, and `demo-large`, the second
 * tier of the sample moderation policy's cascade (`endpoint/models/demo-models.ts`).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { writeDemoModel } from "./demo.ts";
import { type DemoExample, demoExamples, loadDemoExamples } from "./demo-fit.ts";
import { DEMO_MODELS, type DemoModelName } from "./demo-models.ts";
import { evaluationStates, expandDemoTemplates, readDemoTemplates } from "./demo-training.ts";

/**
 * The modules that decide what is written for the same inputs: their source is part of the hash,
 * so a changed construction (gain, vocabulary, fitting) never reuses a file made by an older one.
 */
const CONSTRUCTION = [
  "./demo.ts",
  "./demo-fit.ts",
  "./demo-models.ts",
  "./demo-pieces.ts",
  "./demo-training.ts",
  "./chat-template.ts",
  "./vocabulary.ts",
  "./words.ts",
  "../gguf/writer.ts",
];

/** Where the demo models' inputs live (defaults: the repository's events folder). */
export interface DemoModelInputs {
  /** The committed training rows (`demo`). */
  readonly training: string;
  readonly policiesDir: string;
  /**
   * The templates the training rows come from, expanded again with more fills for `demo-large`
   * (the evaluation files beside it are never trained on). @default demo-templates.json beside `training`
   */
  readonly templates?: string;
}

/** The default inputs under a checkout's root. */
export function defaultDemoInputs(root: string): DemoModelInputs {
  return {
    training: join(root, "events", "items", "demo-training.jsonl"),
    policiesDir: join(root, "events", "policies"),
    templates: join(root, "events", "items", "demo-templates.json"),
  };
}

const templatesOf = (inputs: DemoModelInputs) =>
  inputs.templates ?? join(dirname(inputs.training), "demo-templates.json");

/** How {@link ensureDemoModel} makes a missing file. */
export interface EnsureDemoOptions {
  /** Which demo model. @default "demo" */
  readonly name?: DemoModelName;
  /**
   * Writes it (in this process unless told: the local mode fits it in a child process, so that
   * its own event loop keeps reporting progress during the fit). @default writeDemoFile
   */
  readonly write?: (out: string, inputs: DemoModelInputs, name: DemoModelName) => Promise<unknown>;
}

/**
 * The demo model `options.name` for `inputs` in `dir`, written first (`onFit` told) when that
 * content has no file yet.
 */
export async function ensureDemoModel(
  dir: string,
  inputs: DemoModelInputs,
  onFit: () => void = () => undefined,
  options: EnsureDemoOptions = {},
): Promise<string> {
  const name = options.name ?? "demo";
  const hash = createHash("sha256").update(name);
  for (const module of CONSTRUCTION) hash.update(await readFile(new URL(module, import.meta.url)));
  hash.update(
    await readFile(DEMO_MODELS[name].fillsFactor === undefined ? inputs.training : templatesOf(inputs)),
  );
  for (const file of (await readdir(inputs.policiesDir)).filter((f) => f.endsWith(".json")).sort())
    hash.update(`\n${file}\n`).update(await readFile(join(inputs.policiesDir, file)));
  const path = join(dir, `${name}-${hash.digest("hex").slice(0, 12)}.gguf`);
  if (existsSync(path)) return path;
  onFit();
  await mkdir(dir, { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await (options.write ?? writeDemoFile)(temporary, inputs, name);
  await rename(temporary, path);
  return path;
}

/** Fits the demo model `name` on `inputs` and writes it to `out`. @default name "demo" */
export async function writeDemoFile(
  out: string,
  inputs: DemoModelInputs,
  name: DemoModelName = "demo",
): Promise<{ words: number; bytes: number }> {
  const policies = await PolicyRegistry.fromFolder(inputs.policiesDir);
  const recipe = DEMO_MODELS[name];
  const examples = await trainingExamples(inputs, recipe.fillsFactor, (id) => policies.current(id));
  return writeDemoModel(out, examples, recipe.gain, recipe.fit, recipe.size);
}

/** The committed training rows, or the templates expanded `fillsFactor` times as often. */
async function trainingExamples(
  inputs: DemoModelInputs,
  fillsFactor: number | undefined,
  policies: Parameters<typeof loadDemoExamples>[1],
): Promise<DemoExample[]> {
  if (fillsFactor === undefined) return loadDemoExamples(inputs.training, policies);
  const path = templatesOf(inputs);
  const templates = await readDemoTemplates(path);
  const rows = expandDemoTemplates(
    { ...templates, fillsPerTemplate: templates.fillsPerTemplate * fillsFactor },
    await evaluationStates(dirname(path)),
  );
  return demoExamples(rows, policies, path);
}
