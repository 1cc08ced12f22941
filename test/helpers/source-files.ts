/**
 * Reading the repository's own sources, for the tests that hold a convention across the tree (a
 * name written once, a mapping built in one place, one clock type): every TypeScript file under a
 * folder, and a file's code with its comments dropped, so a comment that names a thing is not
 * counted as code that does it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./models.ts";

/** The TypeScript files under `folder` (relative to the repository), its sub-folders included. */
export function tsFiles(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** The code of a TypeScript file (relative to the repository), block and line comments dropped. */
export function codeOf(path: string): string {
  return readFileSync(join(REPO_ROOT, path), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}
