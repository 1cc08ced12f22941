/**
 * Beside a certificate's 95%, the bench's P(certified) and P(wrong | certified) at its setting
 * (issue 33, item 3): the row nearest the certificate, printed by decide calibrate and the report,
 * and the same figures as docs/benchmarks.md's table.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { printProposals } from "../../cli/calibrate/calibrate-propose.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { renderReport } from "../../shared/reports/calibration-report.ts";
import { benchText } from "../../shared/reports/certificate-bench.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { FOUR_OPTIONS_POLICY } from "../helpers/policies.ts";

const certified = { maxError: 0.02, confidence: 0.95, labels: 1200, threshold: 0.5831 };

describe("the bench beside the certificate", () => {
  it("names the nearest row's P(certified) and P(wrong | certified), and its source", () => {
    expect(benchText(certified)).toBe(
      "beside the 95%: the bench's generated sets at 2.0% with 1,500 labels got a certificate 98.2% of the time, and 3.3% of those certificates were wrong (npm run bench:certificate, docs/benchmarks.md; figures from its table, not from these labels)",
    );
    expect(benchText({ ...certified, labels: 400 })).toMatch(
      /with 500 labels got a certificate 60\.3% .* 1\.7% of those/,
    );
  });

  it("matches a certificate on the units it rests on, not on the total label count (issue 40, finding 7)", () => {
    // 920 labels, mostly escalations; the certificate rests on 150 automated items. Before: the
    // 1,500-label row (3.3% wrong when certified); its certificates rested on a median of 637 items.
    expect(benchText({ ...certified, labels: 920, automated: 150 })).toBe(
      "beside the 95%: the bench's generated sets at 2.0% with 500 labels (their certificates rested on a median of 182 automated items, the nearest to this one's 150) got a certificate 60.3% of the time, and 1.7% of those certificates were wrong (npm run bench:certificate, docs/benchmarks.md; figures from its table, not from these labels)",
    );
  });

  it("says nothing where no certificate was given or the bench has no row for it", () => {
    expect(benchText({ ...certified, threshold: null })).toBeUndefined();
    expect(benchText({ ...certified, maxError: 0.03 })).toBeUndefined();
    expect(benchText({ ...certified, confidence: 0.9 })).toBeUndefined();
    // 1% on 500 labels: the bench certified none, so the nearest row with a figure is 1,500.
    expect(benchText({ ...certified, maxError: 0.01, labels: 500 })).toMatch(/with 1,500 labels/);
  });

  it("holds the figures of docs/benchmarks.md's table", async () => {
    const docs = await readFile(join(REPO_ROOT, "docs", "benchmarks.md"), "utf8");
    const rows = [...docs.matchAll(/^\| (\d)% \| ([\d,]+) \| [\d.]+% \| ([\d.]+)% \| ([\d.]+)% \|/gm)];
    expect(rows).toHaveLength(8);
    for (const [, target, labels, certifiedPct, wrongPct] of rows) {
      const text = benchText({
        maxError: Number(target) / 100,
        confidence: 0.95,
        labels: Number(labels!.replace(",", "")),
        threshold: 0.9,
      });
      expect(text).toContain(
        `with ${labels} labels got a certificate ${certifiedPct}% of the time, and ${wrongPct}%`,
      );
    }
  });

  it("is printed by decide calibrate --propose and in the report's certificate section", () => {
    // Before: the certificate's sentence stood alone ("auto threshold ...: ... ≤ 5.0% with 95% confidence (...)").
    const random = new SeededRandom(1);
    const rows = Array.from({ length: 1000 }, (_, i) => {
      const u = [0, 0, 0, 0].map(() => (random.nextFloat() * 2 - 1) * 6);
      const p = softmax(u);
      let draw = random.nextFloat();
      let label = 0;
      while (label < 3 && draw > p[label]!) draw -= p[label++]!;
      return { logits: u, label, group: `g${i}` };
    });
    const goal = { kind: "max-auto-error" as const, maxError: 0.05, confidence: 0.95 };
    const summary = calibratePolicy(FOUR_OPTIONS_POLICY, rows, { goal, now: new Date(0) });
    expect(summary.certificate?.threshold).not.toBeNull();
    const keys = { policy: "v2/policy.json", report: "v2/report.html", summary: "v2/summary.json" };
    const outcome = {
      policyId: "p",
      version: 1,
      status: "proposed" as const,
      labels: 1000,
      proposedVersion: 2,
      keys,
      summary,
    };
    const options = {
      table: "t",
      policiesDir: "p",
      policyId: undefined,
      out: "out",
      minLabels: 10,
      goal,
      eventBus: undefined,
      aws: {},
    };
    const lines = printProposals([outcome], options).lines;
    const at = lines.findIndex((l) => l.startsWith("  auto threshold "));
    const units = summary.certificate!.automated;
    expect(lines[at + 1]).toMatch(
      new RegExp(
        `^ {2}beside the 95%: the bench's generated sets at 5\\.0% with [\\d,]+ labels \\(their certificates rested on a median of [\\d,]+ automated items, the nearest to this one's ${units}\\) got a certificate [\\d.]+% of the time, and [\\d.]+% of those certificates were wrong`,
      ),
    );
    const html = renderReport(FOUR_OPTIONS_POLICY, summary);
    expect(html).toContain(
      `<p id="certificate-bench">beside the 95%: the bench's generated sets at 5.0% with`,
    );
    expect(html).toContain(`the nearest to this one's ${units})`);
  });
});
