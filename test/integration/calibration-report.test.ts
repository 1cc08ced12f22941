/**
 * `decide calibrate` on the labelled sample, end to end: the report, the summary and the proposed
 * policy version (only with --apply, never over an existing file); the HTML report opened in
 * headless Chromium, its plots checked, and a screenshot saved under test-output/.
 */
import { cp, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { chromiumAvailable, launchChromium } from "../helpers/browser.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const SAMPLE = join(REPO_ROOT, "events", "calibration", "ticket-routing.labelled.jsonl");
const calibrate = (args: string[]) => runDecide(["calibrate", ...args]);

describe("decide calibrate", () => {
  it("writes the report, the summary and, with --apply, the next policy version", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const policies = join(dir, "policies");
    await cp(join(REPO_ROOT, "events", "policies"), policies, { recursive: true });
    const out = join(dir, "out");
    const first = await calibrate([
      "--input",
      SAMPLE,
      "--policy",
      "ticket-routing",
      "--policies-dir",
      policies,
      "--out",
      out,
    ]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/line 1001: skipped: label "refunds" is not an option/);
    expect(first.stderr).toMatch(/line 1002: skipped: logits must be 4 finite numbers/);
    expect(first.stdout).toMatch(/not written; rerun with --apply/);
    const summary = JSON.parse(await readFile(join(out, "ticket-routing.summary.json"), "utf8"));
    expect(summary.labels).toBe(1000);
    expect(summary.skipped).toHaveLength(2);
    // The sample's logits are 1.8 times too sharp.
    expect(summary.temperature).toBeGreaterThan(1.6);
    expect(summary.temperature).toBeLessThan(2.0);
    expect(summary.calibrated.ece).toBeLessThan(summary.raw.ece);
    expect(summary.proposedPolicy.version).toBe(2);
    // One temperature figure: the command line, the summary, the proposed file and the report.
    const printed = first.stdout.match(/^ {2}temperature 1 -> (\S+)$/m)?.[1];
    expect(Number(printed)).toBe(summary.temperature);
    expect(summary.proposedPolicy.temperature).toBe(summary.temperature);
    const report = await readFile(join(out, "ticket-routing.report.html"), "utf8");
    expect(report).toContain(`T = ${summary.temperature}</strong>`);

    const applyArgs = [
      "--input",
      SAMPLE,
      "--policy",
      "ticket-routing",
      "--policies-dir",
      policies,
      "--out",
      out,
      "--apply",
    ];
    const applied = await calibrate(applyArgs);
    expect(applied.code).toBe(0);
    const written = JSON.parse(await readFile(join(policies, "ticket-routing.v2.json"), "utf8"));
    expect(written).toMatchObject({
      id: "ticket-routing",
      version: 2,
      temperature: summary.proposedPolicy.temperature,
    });
    expect(written.predictionSet.targetCoverage).toBe(0.9);
    expect(written.baseline.optionMix).toHaveLength(4);
    const { parsePolicy } = await import("../../shared/domain/policy/policy.ts");
    expect(parsePolicy(written).version).toBe(2);
    const again = await calibrate(applyArgs);
    // Version 2 is now current, so the proposal is version 3: nothing is overwritten.
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/ticket-routing\.v3\.json/);
  });

  it("reads labels saved with a byte-order mark and CRLF, skipping invalid UTF-8 and over-long lines by number", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const rows = (await readFile(SAMPLE, "utf8")).split("\n").filter(Boolean).slice(0, 1000);
    const file = join(dir, "labels.jsonl");
    await writeFile(
      file,
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(`${rows.slice(0, 500).join("\r\n")}\r\n`),
        Buffer.from([0x7b, 0xff, 0x7d, 0x0d, 0x0a]), // line 501: not UTF-8
        Buffer.from(`{"label":"billing","state":"${"x".repeat(300_000)}"}\r\n`), // line 502: too long
        Buffer.from(`${rows.slice(500).join("\r\n")}\r\n`),
      ]),
    );
    const result = await calibrate([
      "--input",
      file,
      "--policy",
      "ticket-routing",
      "--out",
      join(dir, "out"),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^line 501: skipped: is not valid UTF-8 \(at byte 2 of the line\)/m);
    expect(result.stderr).toMatch(
      /^line 502: skipped: is \d+ bytes, over the limit of 262144 bytes per line$/m,
    );
    expect(result.stderr).toMatch(/2 rows skipped, 1000 used/);
  });

  it("checks recent decisions against the baseline: quiet when alike, exit 3 on drift", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    expect((await calibrate(["--input", SAMPLE, "--policy", "ticket-routing", "--out", dir])).code).toBe(0);
    const summaryPath = join(dir, "ticket-routing.summary.json");
    const summary = JSON.parse(await readFile(summaryPath, "utf8"));
    // Recent decisions drawn to match the baseline's mix, confidence and escalation rate.
    const like = Array.from({ length: 200 }, (_, i) => {
      const k = summary.baseline.optionMix.findIndex(
        (_: number, j: number, mix: number[]) =>
          (i + 0.5) / 200 < mix.slice(0, j + 1).reduce((a: number, b: number) => a + b, 0),
      );
      const p = [0, 0, 0, 0].map((_, j) =>
        j === k ? summary.baseline.meanConfidence : (1 - summary.baseline.meanConfidence) / 3,
      );
      return {
        distribution: Object.fromEntries(summary.options.map((id: string, j: number) => [id, p[j]])),
        route: i / 200 < summary.baseline.escalationRate ? "human" : "auto",
      };
    });
    const drifted = like.map((d) => ({
      ...d,
      distribution: { billing: 0.55, technical: 0.15, account: 0.15, out_of_scope: 0.15 },
    }));
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(dir, "like.jsonl"), like.map((d) => JSON.stringify(d)).join("\n"));
    await writeFile(join(dir, "drifted.jsonl"), drifted.map((d) => JSON.stringify(d)).join("\n"));
    const quiet = await calibrate([
      "--check",
      "--baseline",
      summaryPath,
      "--recent",
      join(dir, "like.jsonl"),
    ]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/no drift/);
    const loud = await calibrate([
      "--check",
      "--baseline",
      summaryPath,
      "--recent",
      join(dir, "drifted.jsonl"),
    ]);
    expect(loud.code).toBe(3);
    expect(loud.stdout).toMatch(/DRIFT mean_confidence/);
    expect(loud.stdout).toMatch(/DRIFT option_mix/);
  });

  it("refuses fewer than 10 rows with a one-line usage error, no stack", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const { writeFile } = await import("node:fs/promises");
    const three = (await readFile(SAMPLE, "utf8")).split("\n").slice(0, 3).join("\n");
    await writeFile(join(dir, "three.jsonl"), three);
    const run = await calibrate([
      "--input",
      join(dir, "three.jsonl"),
      "--policy",
      "ticket-routing",
      "--out",
      dir,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr.split("\n")[0]).toBe(
      "decide calibrate: ticket-routing: 3 labelled rows fit the policy; calibration needs at least 10",
    );
    expect(run.stderr).not.toMatch(/RangeError|\n\s+at /);
  });

  it("certifies the auto threshold with --max-auto-error and draws the bound", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const run = await calibrate([
      "--input",
      SAMPLE,
      "--policy",
      "ticket-routing",
      "--out",
      dir,
      "--max-auto-error",
      "0.02",
      "--confidence",
      "0.95",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(dir, "ticket-routing.summary.json"), "utf8"));
    const c = summary.certificate;
    expect(run.stdout).toContain(
      `auto threshold ${c.threshold}: wrong automatic actions ≤ 2.0% with 95% confidence (observed ${c.errors} of ${c.automated} automated, coverage ${(c.coverage * 100).toFixed(1)}%)`,
    );
    expect(summary.proposedPolicy.autoThreshold).toBe(c.threshold);
    expect(summary.proposedPolicy.certificate).toMatchObject({
      maxError: 0.02,
      confidence: 0.95,
      labels: 1000,
    });
    // The sample's rows name no model: said, and the certificate names none.
    expect(run.stdout).toMatch(/do not name the model that scored them/);
    expect(summary.proposedPolicy.certificate.modelSha256).toBeNull();
    const report = await readFile(join(dir, "ticket-routing.report.html"), "utf8");
    expect(report).toMatch(/<path class="bound" d="M[^"]+L/);
    expect(report).toMatch(/<line class="target"/);
  });

  it("--check refuses rows of another policy, version or options than the baseline's", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    expect((await calibrate(["--input", SAMPLE, "--policy", "ticket-routing", "--out", dir])).code).toBe(0);
    const { writeFile } = await import("node:fs/promises");
    const moderation = Array.from({ length: 20 }, () =>
      JSON.stringify({
        policyId: "content-moderation",
        distribution: { allow: 0.01, restrict: 0.01, remove: 0.97, out_of_scope: 0.01 },
        route: "human",
      }),
    );
    await writeFile(join(dir, "moderation.jsonl"), moderation.join("\n"));
    const check = (file: string) =>
      calibrate([
        "--check",
        "--baseline",
        join(dir, "ticket-routing.summary.json"),
        "--recent",
        join(dir, file),
      ]);
    const refused = await check("moderation.jsonl");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /line 1: refused: belongs to policy "content-moderation", the baseline is ticket-routing@1/,
    );
    expect(refused.stderr).toMatch(/none of the 20 rows .* is a decision of ticket-routing@1/);
    expect(refused.stdout).not.toMatch(/DRIFT/);
    const otherOptions = JSON.stringify({ distribution: { allow: 0.5, remove: 0.5 }, route: "auto" });
    const otherVersion = JSON.stringify({
      policyId: "ticket-routing",
      policyVersion: 3,
      distribution: { billing: 0.9, technical: 0.05, account: 0.03, out_of_scope: 0.02 },
      route: "auto",
    });
    await writeFile(
      join(dir, "mixed.jsonl"),
      [otherOptions, otherVersion, ...moderation.slice(0, 1)].join("\n"),
    );
    const mixed = await check("mixed.jsonl");
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/line 1: refused: its options \(allow, remove\) are not the baseline's/);
    expect(mixed.stderr).toMatch(/line 2: refused: is a decision of ticket-routing@3/);
    // Nothing to compare (an empty file, or lines that are no decisions) is no all-clear either.
    await writeFile(join(dir, "empty.jsonl"), "");
    await writeFile(
      join(dir, "items.jsonl"),
      JSON.stringify({ id: "A", policy: "ticket-routing", state: "x" }),
    );
    for (const file of ["empty.jsonl", "items.jsonl"]) {
      const nothing = await check(file);
      expect(nothing.code, file).toBe(2);
      expect(nothing.stderr).toMatch(/holds no decision to check .*: nothing to compare with the baseline/);
      expect(nothing.stdout).not.toMatch(/no drift/);
    }
  });

  it("scores labelled states on a local model, with progress lines", async () => {
    const { generatedModel } = await import("../helpers/models.ts");
    const { writeFile } = await import("node:fs/promises");
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const labels = ["billing", "technical", "account", "out_of_scope"];
    const rows = Array.from({ length: 24 }, (_, i) => ({
      id: `S-${i}`,
      label: labels[i % 4],
      state: `ticket ${i}: my invoice and login`,
    }));
    const input = join(dir, "states.jsonl");
    await writeFile(input, rows.map((r) => JSON.stringify(r)).join("\n"));
    const result = await calibrate([
      "--input",
      input,
      "--policy",
      "ticket-routing",
      "--model",
      await generatedModel(),
      "--out",
      dir,
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/scored 24\/24/);
    const summary = JSON.parse(await readFile(join(dir, "ticket-routing.summary.json"), "utf8"));
    expect(summary.labels).toBe(24);
    // 24 labels: the report keeps the human floor and says why.
    expect(summary.threshold.notes.join(" ")).toMatch(/only 24 labels|no threshold reaches/);
  });

  it.skipIf(!chromiumAvailable())("renders a report with its plots in headless Chromium", async () => {
    const dir = await mkdtemp(join(tmpdir(), "calibrate-"));
    const result = await calibrate(["--input", SAMPLE, "--policy", "ticket-routing", "--out", dir]);
    expect(result.code).toBe(0);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(pathToFileURL(join(dir, "ticket-routing.report.html")).href);
      expect(await page.title()).toBe("Calibration: ticket-routing v1");
      // One bar per non-empty bin, before and after calibration.
      const summary = JSON.parse(await readFile(join(dir, "ticket-routing.summary.json"), "utf8"));
      const nonEmpty = (bins: { count: number }[]) => bins.filter((b) => b.count > 0).length;
      expect(await page.locator("#reliability rect.calibrated").count()).toBe(
        nonEmpty(summary.reliability.calibrated),
      );
      expect(await page.locator("#reliability rect.current").count()).toBe(
        nonEmpty(summary.reliability.current),
      );
      expect(nonEmpty(summary.reliability.calibrated)).toBeGreaterThan(2);
      const path = await page.locator("#risk-coverage path").getAttribute("d");
      expect(path?.split("L").length).toBeGreaterThan(10);
      expect(await page.locator("#confusion tbody tr").count()).toBe(4);
      expect(await page.locator("#confusion tbody td").count()).toBe(16);
      const box = await page.locator("#reliability").boundingBox();
      expect(box!.width).toBeGreaterThan(200);
      await mkdir(join(REPO_ROOT, "test-output"), { recursive: true });
      await page.screenshot({
        path: join(REPO_ROOT, "test-output", "calibration-report.png"),
        fullPage: true,
      });
    } finally {
      await browser.close();
    }
  });
});
