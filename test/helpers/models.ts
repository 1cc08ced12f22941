/**
 * Test models: the generated tiny model (made once per checkout into an ignored folder) and the
 * optional third-party models beside the checkout in ../shared/models.
 */
import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { MODEL_SHAPES } from "../../endpoint/models/shapes.ts";
import { type SynthesizeOptions, synthesizeModel } from "../../endpoint/models/synthesize.ts";

/** Root of the checkout. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Ignored folder for generated test artefacts. */
export const CACHE_DIR = join(REPO_ROOT, ".cache", "test-models");

/** Third-party models for extra checks; absent on machines without the handbook folder. */
export const SHARED_MODELS_DIR = resolve(REPO_ROOT, "../shared/models");

/**
 * Path of a generated tiny model, written on first use. Parallel test files may race to write
 * it, so each writes a private temporary file and renames it into place.
 */
export async function generatedModel(
  name = "tiny",
  options: Omit<SynthesizeOptions, "out"> = {},
): Promise<string> {
  const path = join(CACHE_DIR, `${name}.gguf`);
  if (existsSync(path)) return path;
  await mkdir(CACHE_DIR, { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await synthesizeModel(MODEL_SHAPES.tiny, { ...options, out: temporary });
  await rename(temporary, path);
  return path;
}

/**
 * Path of the demo model (the bag-of-words GGUF the local mode uses), written once per content of
 * its training set and policies: unlike the tiny model it routes the sample items both ways.
 */
export async function demoModelPath(): Promise<string> {
  return ensureDemoModel(CACHE_DIR, defaultDemoInputs(REPO_ROOT));
}

/** Path of `demo-large`, the demo model a cascade asks second (endpoint/models/demo-models.ts). */
export async function demoLargeModelPath(): Promise<string> {
  return ensureDemoModel(CACHE_DIR, defaultDemoInputs(REPO_ROOT), undefined, { name: "demo-large" });
}

/** Path of a shared third-party model, or undefined (with the reason) when it is absent. */
export function sharedModel(file: string): string | undefined {
  const path = join(SHARED_MODELS_DIR, file);
  if (existsSync(path)) return path;
  console.warn(`SKIP: ${path} is absent, so the extra checks on ${file} do not run`);
  return undefined;
}
