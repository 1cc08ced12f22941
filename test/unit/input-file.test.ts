/**
 * A file that cannot be read is named with the reason in words. Before, `decide publish`,
 * `calibrate` and `what-if` printed Node's text (`ENOENT: no such file or directory, stat 'x'`).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../cli/args.ts";
import { fileProblem, openInput } from "../../cli/input-file.ts";

describe("openInput", () => {
  it("names a missing file and a folder in words, as usage errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), "input-file-"));
    const missing = join(dir, "nope.jsonl");
    await expect(openInput(missing, "--input nope.jsonl")).rejects.toThrow(
      new UsageError("cannot read --input nope.jsonl: no such file"),
    );
    await expect(openInput(dir)).rejects.toThrow(`cannot read ${dir}: it is a folder, not a file`);
  });

  it("keeps the message of a reason it has no words for", () => {
    expect(
      fileProblem(Object.assign(new Error("EACCES: permission denied, open 'x'"), { code: "EACCES" })),
    ).toBe("permission denied");
    expect(fileProblem(new Error("something else"))).toBe("something else");
  });
});
