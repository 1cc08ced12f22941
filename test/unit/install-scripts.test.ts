/**
 * npm 11 warns at every install about dependencies whose install scripts `allowScripts` does not
 * cover (and npm 12 will skip them): esbuild (fetches its platform binary) and node-llama-cpp
 * (checks its prebuilt llama.cpp binary) need theirs. package.json approves each package of the
 * lockfile that has an install script, and nothing else.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/models.ts";

const json = async <T>(name: string): Promise<T> =>
  JSON.parse(await readFile(join(REPO_ROOT, name), "utf8")) as T;

describe("install scripts", () => {
  it("allows exactly the lockfile's packages that have an install script", async () => {
    const lock = await json<{ packages: Record<string, { version?: string; hasInstallScript?: boolean }> }>(
      "package-lock.json",
    );
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([, entry]) => entry.hasInstallScript)
        .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)),
    );
    expect([...withScripts].sort()).toEqual(["esbuild", "node-llama-cpp"]);
    const { allowScripts = {} } = await json<{ allowScripts?: Record<string, boolean> }>("package.json");
    // A key is a name, or a name pinned to a version ("esbuild@0.25.12"; scoped names start with @).
    const nameOf = (key: string) =>
      key.startsWith("@") ? `@${key.slice(1).split("@")[0]}` : key.split("@")[0]!;
    const allowed = Object.keys(allowScripts).map(nameOf);
    expect(allowed.sort()).toEqual([...withScripts].sort());
    expect(Object.values(allowScripts).every((value) => value === true)).toBe(true);
  });
});
