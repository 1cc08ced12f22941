/**
 * Batch intake's memory is bounded by the line limit, not by the file: a generated file of about
 * 600 MiB (larger than the intake function's 512 MiB), most of it one line, is read in a child
 * process whose peak resident memory stays under the function's memory and grows by far less
 * than the file over the same run without the long line; that line is refused by number and
 * every other line is queued. (Before the one reader, a 100 MiB line peaked at 525 MiB and a
 * 600 MiB line crashed intake with "RangeError: Invalid string length".)
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BATCH_LANE } from "../../shared/domain/topology.ts";
import { REPO_ROOT } from "../helpers/models.ts";

interface ChildReport {
  counts: { lines: number; accepted: number; rejected: number };
  queued: number;
  refused: { line: number; problems: { field: string; message: string }[] }[];
  bytesRead: number;
  peakRssMiB: number;
  seconds: number;
}

async function intakeInChild(lineMiB: number, lines: number): Promise<ChildReport> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--import",
      "tsx",
      join(REPO_ROOT, "test", "helpers", "intake-memory-child.ts"),
      "--line-mib",
      String(lineMiB),
      "--lines",
      String(lines),
    ],
    { cwd: REPO_ROOT },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as ChildReport;
}

describe("batch intake memory", () => {
  it("reads a 600 MiB file with a 600 MiB line under the function's 512 MiB, refusing only that line", async () => {
    const without = await intakeInChild(0, 2000);
    const huge = await intakeInChild(600, 2000);
    console.log(
      `intake peak RSS: ${huge.peakRssMiB} MiB reading ${Math.round(huge.bytesRead / 2 ** 20)} MiB ` +
        `(${without.peakRssMiB} MiB without the long line), ${huge.seconds} s`,
    );
    expect(huge.bytesRead).toBeGreaterThan(BATCH_LANE.intakeMemoryMiB * 2 ** 20);
    expect(huge.counts).toMatchObject({ lines: 2002, accepted: 2001, rejected: 1 });
    expect(huge.queued).toBe(2001);
    expect(huge.refused).toEqual([
      {
        line: 2,
        stage: "intake",
        problems: [
          { field: "line", message: expect.stringMatching(/^is 6\d{8} bytes, over the limit of 262144/) },
        ],
      },
    ]);
    expect(huge.peakRssMiB).toBeLessThan(BATCH_LANE.intakeMemoryMiB);
    // The long line costs far less than its own size: memory follows the line limit, not the file.
    expect(huge.peakRssMiB - without.peakRssMiB).toBeLessThan(200);
  });
});
