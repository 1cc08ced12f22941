/**
 * One capacity engine, one answer (issue 34, item 5): for the same fixed instance counts
 * `decide capacity --min-instances N --max-instances N` prints the figures `npm run sizing` prints
 * for that count (instances, concurrent batches, p99, cost), on the stack as synthesized now, and
 * its summary names the count sizing would suggest for the rate and which workload row that is.
 * Before, capacity started at the minimum of 1 instance and had no --min-instances: at 10 items/s
 * it ended with thousands waiting where sizing's row kept up.
 */
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { synthStack } from "../helpers/synth-stack.ts";

const TEMPLATE = join("test-output", "capacity-sizing", "DecisionPipeline.template.json");

/** Sizing's row for `rate` and `workload` ("fresh" or "cached preamble"): its cells. */
async function sizingRow(rate: number, workload: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "infra/scripts/sizing.ts", "--template", TEMPLATE, "--rates", String(rate)],
    { cwd: REPO_ROOT, maxBuffer: 16 * 2 ** 20 },
  );
  const row = stdout.split("\n").find((l) => l.startsWith(`| ${rate} | ${workload} |`));
  if (!row) throw new Error(`no ${workload} row at ${rate}/s in:\n${stdout}`);
  return row
    .split("|")
    .slice(1, -1)
    .map((c) => c.trim());
}

const SUMMARY =
  /^rate (\d+)\/s for 30m: (\d+) instances \(max \d+\), (\d+) concurrent batches, decided [\d,]+, waiting [\d,]+, dead-lettered 0, p99 ([\d,.]+ s), (\$[\d.,]+) per 1,000, (\$[\d.,]+) per month; suggests (\d+) instances for \d+\/s \((the fresh row|the cached-preamble row)/;

beforeAll(() => {
  mkdirSync(join(REPO_ROOT, "test-output", "capacity-sizing"), { recursive: true });
  const json = Template.fromStack(synthStack({ maxInstanceCount: 21 })).toJSON();
  writeFileSync(join(REPO_ROOT, TEMPLATE), JSON.stringify(json));
}, 180_000);

describe("decide capacity and npm run sizing", () => {
  it.each([
    ["fresh", []],
    ["cached preamble", ["--preamble-cached"]],
  ])(
    "print the same figures for sizing's %s count at 10/s, and capacity suggests that count",
    async (workload, flags) => {
      const [, , instances, concurrency, p99, perThousand, perMonth] = await sizingRow(10, workload);
      const count = Number(instances);
      expect(count).toBeGreaterThan(0);
      const run = await runDecide([
        "capacity",
        "--rate",
        "10",
        "--min-instances",
        String(count),
        "--max-instances",
        String(count),
        "--template",
        TEMPLATE,
        ...flags,
      ]);
      expect(run.code, run.stderr).toBe(0);
      const summary = run.stdout.trimEnd().split("\n").at(-1)!;
      const match = SUMMARY.exec(summary);
      expect(match, summary).not.toBeNull();
      const [, , peak, batches, seconds, thousand, month, suggested, row] = match!;
      expect(Number(peak)).toBe(count);
      // Capacity prints the peak; sizing prints the peak and the mapping's MaximumConcurrency (1.5 per
      // instance, rounded down), which the peak need not reach (30 of 31 on 21 instances).
      expect(concurrency?.split(" / ")[0]).toBe(batches);
      expect(seconds).toBe(p99);
      expect([thousand, month]).toEqual([perThousand, perMonth]);
      expect(Number(suggested)).toBe(count);
      expect(row).toBe(workload === "fresh" ? "the fresh row" : "the cached-preamble row");
    },
    300_000,
  );

  it("holds 21 instances fixed as sizing does: no scaling, every instance from the start", async () => {
    const run = await runDecide([
      "capacity",
      "--rate",
      "10",
      "--min-instances",
      "21",
      "--max-instances",
      "21",
      "--template",
      TEMPLATE,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("what if: min instances 1 → 21");
    const summary = run.stdout.trimEnd().split("\n").at(-1)!;
    expect(summary).toMatch(/^rate 10\/s for 30m: 21 instances \(max 21\)/);
    expect(summary).toMatch(/waiting \d{1,3}, dead-lettered 0/);
    expect(run.stdout).toMatch(/--preamble-cached/);
  }, 300_000);
});
