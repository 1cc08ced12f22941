/**
 * The demo model on disk, made once per content: the file name carries a hash of the training
 * rows, the policies and the code that builds it, so a changed training set or policy is
 * refitted instead of an old file being reused silently. Parallel writers (test files, two local
 * modes) each write a private temporary file and rename it into place.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { writeDemoModel } from "./demo.ts";
import { loadDemoExamples } from "./demo-fit.ts";

/**
 * The modules that decide what is written for the same inputs: their source is part of the hash,
 * so a changed construction (gain, vocabulary, fitting) never reuses a file made by an older one.
 */
const CONSTRUCTION = [
  "./demo.ts",
  "./demo-fit.ts",
  "./demo-pieces.ts",
  "./chat-template.ts",
  "./vocabulary.ts",
  "./words.ts",
  "../gguf/writer.ts",
];

/** Where the demo model's inputs live (defaults: the repository's events folder). */
export interface DemoModelInputs {
  readonly training: string;
  readonly policiesDir: string;
}

/** The default inputs under a checkout's root. */
export function defaultDemoInputs(root: string): DemoModelInputs {
  return {
    training: join(root, "events", "items", "demo-training.jsonl"),
    policiesDir: join(root, "events", "policies"),
  };
}

/**
 * The demo model for `inputs` in `dir`, written first (`onFit` told) when that content has no file
 * yet, by `write` (in this process unless told: the local mode fits it in a child process, so that
 * its own event loop keeps reporting progress during the fit).
 */
export async function ensureDemoModel(
  dir: string,
  inputs: DemoModelInputs,
  onFit: () => void = () => undefined,
  write: (out: string, inputs: DemoModelInputs) => Promise<unknown> = writeDemoFile,
): Promise<string> {
  const hash = createHash("sha256");
  for (const module of CONSTRUCTION) hash.update(await readFile(new URL(module, import.meta.url)));
  hash.update(await readFile(inputs.training));
  for (const file of (await readdir(inputs.policiesDir)).filter((f) => f.endsWith(".json")).sort())
    hash.update(`\n${file}\n`).update(await readFile(join(inputs.policiesDir, file)));
  const path = join(dir, `demo-${hash.digest("hex").slice(0, 12)}.gguf`);
  if (existsSync(path)) return path;
  onFit();
  await mkdir(dir, { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await write(temporary, inputs);
  await rename(temporary, path);
  return path;
}

/** Fits the demo model on `inputs` and writes it to `out`. */
export async function writeDemoFile(
  out: string,
  inputs: DemoModelInputs,
): Promise<{ words: number; bytes: number }> {
  const policies = await PolicyRegistry.fromFolder(inputs.policiesDir);
  return writeDemoModel(out, await loadDemoExamples(inputs.training, (id) => policies.current(id)));
}
