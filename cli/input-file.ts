/**
 * Opening an input file for the one input reader (`shared/domain/input/lines.ts`): its bytes as
 * a stream, `-` for standard input; a path that cannot be read is a usage error naming it.
 */
import { open, stat } from "node:fs/promises";
import { UsageError } from "./args.ts";

/** The bytes of `path` as a stream; `what` names it in the error (`--input x.jsonl`). */
export async function openInput(path: string, what = path): Promise<AsyncIterable<Uint8Array>> {
  if (path === "-") return process.stdin;
  const cannot = (error: unknown): never => {
    throw new UsageError(`cannot read ${what}: ${(error as Error).message}`);
  };
  if ((await stat(path).catch(cannot)).isDirectory()) cannot(new Error("it is a folder, not a file"));
  return (await open(path).catch(cannot)).createReadStream();
}
