/**
 * `decide capacity` as a user runs it: on today's template (the trimmed fixture) it prints what it
 * read, a row per minute and ends with exactly one summary line of the documented form; wrong
 * flags and a missing template get a one-line reason.
 */
import { describe, expect, it } from "vitest";
import { runDecide } from "../helpers/decide-cli.ts";

const TEMPLATE = "test/fixtures/capacity-baseline.template.json";
const SUMMARY =
  /^rate 10\/s for 30m: (\d+) instances \(max 4\), (\d+) concurrent batches, decided ([\d,]+), waiting ([\d,]+), dead-lettered ([\d,]+), p99 ([\d,.]+) s, \$([\d.,]+) per 1,000, \$([\d.,]+) per month; suggests (\d+ instances|no instance count keeps up \(see npm run sizing\)) for 10\/s \(the fresh row; --preamble-cached for items under a cached policy preamble\)$/;

describe("decide capacity", () => {
  it("simulates the template and ends with the summary line", async () => {
    const run = await runDecide(["capacity", "--rate", "10", "--template", TEMPLATE]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(`template: ${TEMPLATE}`);
    expect(run.stdout).toContain("scaling: target tracking invocationsPerInstance = 30");
    const table = lines.findIndex((l) => /^\s*minute\s+arrived/.test(l));
    expect(lines.slice(table + 1, table + 31).map((l) => Number(l.trim().split(/\s+/)[0]))).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    const summary = lines.at(-1)!;
    const match = SUMMARY.exec(summary);
    expect(match, summary).not.toBeNull();
    const [instances, batches, decided, waiting] = match!
      .slice(1, 5)
      .map((x) => Number(x.replaceAll(",", "")));
    // Retried single-item calls scale it out to the maximum; eight batches in flight cap it there.
    expect(instances).toBe(4);
    expect(batches).toBe(8);
    // About 18,000 arrive in 30 minutes at 10/s; four instances (2.6 items/s at best) decide a fraction.
    expect(decided! + waiting!).toBeGreaterThan(17_000);
    expect(decided!).toBeLessThan(4_700);
    expect(lines.filter((l) => l.startsWith("rate "))).toHaveLength(1);
  });

  it("asks what a raised maximum would do, re-deriving what the stack derives from it", async () => {
    const run = await runDecide([
      "capacity",
      "--rate",
      "2",
      "--for",
      "10m",
      "--template",
      TEMPLATE,
      "--max-instances",
      "12",
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("what if: max instances 4 → 12");
    expect(run.stdout).toMatch(/what if: intake MaximumConcurrency 8 → \d+ \(as the stack derives it\)/);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(/^rate 2\/s for 10m: \d+ instances \(max 12\)/);
  });

  it("adds a cascade's second model to the time per item, and sizes the fleet for it", async () => {
    const base = ["capacity", "--rate", "2", "--for", "10m", "--template", TEMPLATE];
    const perItem = (stdout: string) => Number(/; ([\d.]+) s per item/.exec(stdout)?.[1]);
    const [one, two] = await Promise.all([
      runDecide(base),
      runDecide([...base, "--second-model-share", "0.5", "--second-model-ratio", "2"]),
    ]);
    expect(two.code).toBe(0);
    expect(two.stdout).toContain(
      "cascade: 50% of items also asked of a second model at 2x the first's time: 2x the time per item",
    );
    expect(perItem(two.stdout)).toBeCloseTo(2 * perItem(one.stdout), 2);
    const suggests = (stdout: string) => Number(/suggests (\d+) instances/.exec(stdout)?.[1]);
    expect(suggests(two.stdout)).toBeGreaterThan(suggests(one.stdout));
  });

  it.each([
    [
      ["capacity", "--rate", "1", "--template", TEMPLATE, "--second-model-share", "1.5"],
      2,
      /--second-model-share must be a share from 0 to 1, got "1\.5"/,
    ],
    [
      ["capacity", "--rate", "1", "--template", TEMPLATE, "--second-model-ratio", "3"],
      2,
      /--second-model-ratio needs --second-model-share/,
    ],
    [["capacity", "--template", TEMPLATE], 2, /--rate is required/],
    [
      ["capacity", "--rate", "fast", "--template", TEMPLATE],
      2,
      /--rate must be a positive number, got "fast"/,
    ],
    [
      ["capacity", "--rate", "1", "--for", "forever", "--template", TEMPLATE],
      2,
      /--for must look like 90s, 30m, 2h or 1d/,
    ],
    [["capacity", "--rate", "1", "--burst", "10", "--template", TEMPLATE], 2, /--burst-for is required/],
    [
      ["capacity", "--rate", "1", "--template", "nowhere.json"],
      1,
      /no template at nowhere\.json: run `npm run synth` first/,
    ],
    [
      ["capacity", "--rate", "1", "--template", TEMPLATE, "--instance-type", "ml.g5.xlarge"],
      1,
      /ml\.g5\.xlarge is a GPU instance: no decision time was measured/,
    ],
  ])("refuses %j with a reason", async (args, code, message) => {
    const run = await runDecide(args);
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
