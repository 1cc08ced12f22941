/**
 * Opening an input file for the one input reader (`shared/domain/input/lines.ts`): its bytes as
 * a stream, `-` for standard input; a path that cannot be read is a usage error naming it.
 */
import { open, stat } from "node:fs/promises";
import { UsageError } from "./args.ts";

/** Why a file could not be read, in words (`no such file`), not Node's `ENOENT: …, stat 'x'`. */
export function fileProblem(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a folder, not a file";
  return (error as Error).message;
}

/** A usage error saying that `what` (`--input x.jsonl`) cannot be read, and why. */
export function cannotRead(what: string, error: unknown): UsageError {
  return new UsageError(`cannot read ${what}: ${fileProblem(error)}`, { cause: error });
}

/** The bytes of `path` as a stream; `what` names it in the error (`--input x.jsonl`). */
export async function openInput(path: string, what = path): Promise<AsyncIterable<Uint8Array>> {
  if (path === "-") return process.stdin;
  const cannot = (error: unknown): never => {
    throw cannotRead(what, error);
  };
  if ((await stat(path).catch(cannot)).isDirectory()) cannot(new Error("it is a folder, not a file"));
  return (await open(path).catch(cannot)).createReadStream();
}
