/**
 * Finds the GGUF file to serve: the path given, or the one file in a folder (SageMaker unpacks
 * the model archive into `/opt/ml/model`).
 */
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ModelFileError } from "../runtime/errors.ts";

/** A split model's first part, e.g. `model-00001-of-00003.gguf`. */
const FIRST_SPLIT = /-0*1-of-\d+\.gguf$/i;
const ANY_SPLIT = /-\d+-of-\d+\.gguf$/i;

/**
 * Resolves `location` to one GGUF file. A folder must hold exactly one model (a split model
 * counts as one, through its first part), searched one level deep as archives often nest, leaving
 * out the files in `served` (a cascade's later models, served by name from the same archive).
 */
export async function discoverModelFile(location: string, served: readonly string[] = []): Promise<string> {
  const info = await stat(location).catch((error: unknown) => {
    throw new ModelFileError(location, "does not exist (give --model a GGUF file or a folder holding one)", {
      cause: error,
    });
  });
  if (info.isFile()) return location;
  const others = new Set(served.map((path) => resolve(path)));
  const candidates = (await ggufFiles(location, 2)).filter((path) => !others.has(resolve(path)));
  if (candidates.length === 0) throw new ModelFileError(location, "holds no .gguf file");
  if (candidates.length > 1) {
    throw new ModelFileError(
      location,
      `holds ${candidates.length} models (${candidates.join(", ")}); name one with --model${served.length ? "" : ", or serve the others by name with --extra-model NAME=PATH"}`,
    );
  }
  return candidates[0]!;
}

async function ggufFiles(folder: string, depth: number): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(folder, entry.name);
    if (entry.isFile() && entry.name.toLowerCase().endsWith(".gguf")) {
      if (!ANY_SPLIT.test(entry.name) || FIRST_SPLIT.test(entry.name)) found.push(path);
    } else if (entry.isDirectory() && depth > 1 && !entry.name.startsWith(".")) {
      found.push(...(await ggufFiles(path, depth - 1)));
    }
  }
  return found;
}
