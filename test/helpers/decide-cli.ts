/**
 * Runs the `decide` CLI as a user would (a child process of `bin/decide.js` in the repository
 * root) and returns its exit code and output, whether it succeeded or not.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./models.ts";

const run = promisify(execFile);
/** The CLI's entry point. */
export const DECIDE = join(REPO_ROOT, "bin", "decide.js");

/** What a CLI run left. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `decide ...args` with the environment plus `env`. */
export async function runDecide(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [DECIDE, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      maxBuffer: 16 * 2 ** 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== "number") throw error; // the process could not be started at all
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
