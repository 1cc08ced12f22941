/**
 * `decide publish` reads its file line by line (issue 36, observation 6): it held every item in
 * memory before sending (448 MB of resident memory for a 300 MB file). A dry run reads and
 * validates every line as a send does; its peak resident memory for a 300 MiB file must stay
 * within 64 MiB of its peak for a 30 MiB file (what grows is the set of ids seen, about 60 bytes
 * an item: 157,000 items here).
 */
import { execFile } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { DECIDE } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const MIB = 2 ** 20;

/** Writes about `mib` MiB of ~2 KB ticket items, as a stream (the file is never in memory). */
async function itemsFile(path: string, mib: number): Promise<number> {
  const out = createWriteStream(path);
  const filler = "the invoice shows a charge I do not recognise ".repeat(40);
  let bytes = 0;
  let count = 0;
  while (bytes < mib * MIB) {
    const line = `${JSON.stringify({ id: `M-${count}`, policy: "ticket-routing", state: `${count} ${filler}` })}\n`;
    bytes += line.length;
    count++;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  return count;
}

/** Peak resident memory (MiB) of `decide publish FILE --dry-run`, and its summary line. */
async function dryRun(file: string): Promise<{ peakMiB: number; stdout: string }> {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      "tsx",
      "--import",
      join(REPO_ROOT, "test", "helpers", "peak-memory.ts"),
      DECIDE,
      "publish",
      file,
      "--dry-run",
    ],
    { cwd: REPO_ROOT, maxBuffer: 16 * MIB },
  );
  const peak = /peak-rss-kib=(\d+)/.exec(stderr);
  if (!peak) throw new Error(`no peak memory reported: ${stderr.slice(-500)}`);
  return { peakMiB: Number(peak[1]) / 1024, stdout };
}

describe("decide publish memory", () => {
  it("reads a 300 MiB file within 64 MiB of what a 30 MiB file takes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "publish-memory-"));
    try {
      const small = join(dir, "small.jsonl");
      const large = join(dir, "large.jsonl");
      const smallCount = await itemsFile(small, 30);
      const largeCount = await itemsFile(large, 300);
      const before = await dryRun(small);
      const after = await dryRun(large);
      console.log(
        `decide publish --dry-run peak RSS: ${before.peakMiB.toFixed(0)} MiB for 30 MiB (${smallCount} items), ` +
          `${after.peakMiB.toFixed(0)} MiB for 300 MiB (${largeCount} items)`,
      );
      expect(before.stdout).toContain(`dry run: ${smallCount} would be sent`);
      expect(after.stdout).toContain(`dry run: ${largeCount} would be sent`);
      expect(after.peakMiB - before.peakMiB).toBeLessThan(64);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 1_800_000);
});
