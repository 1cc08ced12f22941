/**
 * One definition of "automated" and one story on one page (issue 33, items 2, 3, 6 and 7):
 *
 * - the report's threshold table counts only decisions the policy would act on: with many
 *   confident `remove` decisions (never automated) it showed 100% automated at 0.7 where the
 *   certificate said 25.6%; now the table's share at a threshold is the automatable share;
 * - the report states the certificate's sentence once (it was printed twice), where its labels
 *   came from, and the certificate beside the live audit estimate of the same version; its
 *   risk–coverage plot has a legend and a plain axis ("wrong automatic actions" in %, not
 *   "error rate (× 0.14)");
 * - the proposal's drift baseline comes from live decisions under the proposed version: labelled
 *   decisions that are all escalations gave a mean confidence of 0.55 where live traffic's was
 *   0.78 (and an escalation rate of 1.0 or 0.74 where live traffic escalated about half).
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { auditPolicy } from "../../shared/domain/audit/policy-audit.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import { certificateSentence } from "../../shared/domain/calibration/certificate/certificate.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { renderReport } from "../../shared/reports/calibration-report.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { MODERATION } from "../helpers/review-flow.ts";

/** 600 labelled rows: a third confident `remove` (never automated), the rest allow/restrict. */
function rows(): LabelledLogits[] {
  const random = new SeededRandom(21);
  return Array.from({ length: 600 }, (_, i) => {
    const top = i % 3 === 0 ? 2 : i % 3;
    const logits = [0, 0, 0, -2];
    logits[top] = 2 + 7 * random.nextFloat();
    const right = random.nextFloat() < 0.995;
    return { logits, label: right ? top : (top + 1) % 3, group: `r${i}`, kind: "file" as const };
  });
}

describe("the calibration report", () => {
  const summary = calibratePolicy(MODERATION, rows(), {
    goal: { kind: "max-auto-error", maxError: 0.05, confidence: 0.95 },
    now: new Date("2026-12-01T00:00:00.000Z"),
  });

  it("counts in its threshold table only what the policy would act on", () => {
    const at = summary.thresholdTable.find((r) => r.threshold === 0.7)!;
    // Two thirds of the rows may be automated; remove never is, however confident.
    expect(at.coverage).toBeLessThanOrEqual(2 / 3 + 1e-9);
    expect(at.automated).toBeLessThanOrEqual(400);
    // The certificate and the table agree on what "automated" means.
    const c = summary.certificate!;
    expect(c.threshold).not.toBeNull();
    expect(c.coverage).toBeLessThanOrEqual(2 / 3 + 1e-9);
  });

  it("tells one story: the sentence once, the labels' sources, the live estimate beside it, a plot with a legend", () => {
    const live = auditPolicy(
      MODERATION.id,
      Array.from(
        { length: 60 },
        (_, i): DecisionRecord => ({
          itemId: `A-${i}`,
          policyId: MODERATION.id,
          policyVersion: 1,
          status: "reviewed",
          route: "human",
          reason: "audit_sample",
          chosen: "allow",
          label: i < 9 ? "restrict" : "allow",
          auditBand: "all",
          auditInclusionProbability: 0.05,
          createdAt: "2026-11-20T00:00:00.000Z",
          updatedAt: "2026-11-20T00:00:00.000Z",
          eventPublished: true,
        }),
      ),
      new PolicyRegistry([MODERATION]),
      { since: "2026-11-01T00:00:00.000Z", now: "2026-12-01T00:00:00.000Z" },
    );
    const html = renderReport(MODERATION, summary, undefined, undefined, live);
    const sentence = certificateSentence(summary.certificate!).replaceAll("&", "&amp;");
    expect(html.split(sentence)).toHaveLength(2);
    expect(html).toMatch(
      /<p id="certificate-sources">It rests on the labelled decisions at or above its threshold: \d+ from a file\./,
    );
    // 9 wrong of 60 audit labels: the live rate's lower end is above the 5% target.
    expect(html).toMatch(
      /<p id="certificate-live">Live audits since 2026-11-01: 15\.0% wrong .* They disagree: live decisions are wrong more often than the certificate allows/,
    );
    expect(html).toContain('<g class="legend">');
    expect(html).toMatch(/>upper bound<\/text>.*>target<\/text>/s);
    expect(html).toContain(">wrong automatic actions</text>");
    expect(html).not.toMatch(/error rate \(×/);
  });
});

describe("the proposal's drift baseline", () => {
  it("comes from live decisions under the proposed version, not from the labels", async () => {
    const policy = parsePolicy({ ...MODERATION, auditSampleRate: 0.05 });
    const store = new InMemoryDecisionStore();
    const random = new SeededRandom(8);
    // 400 live decisions, about half escalated; only the escalations are labelled.
    for (let i = 0; i < 400; i++) {
      const sure = i % 2 === 0;
      const logits = [sure ? 6 : 1, 0, 0, -2];
      const at = new Date(Date.UTC(2026, 10, 25) + i * 60_000).toISOString();
      const record: DecisionRecord = {
        itemId: `L-${i}`,
        policyId: policy.id,
        policyVersion: 1,
        status: sure ? "actioned" : "reviewed",
        route: sure ? "auto" : "human",
        reason: sure ? "confident" : "below_threshold",
        chosen: "allow",
        topProbability: sure ? 0.99 : 0.5,
        rawLogits: logits,
        ...(sure ? {} : { label: random.nextFloat() < 0.7 ? "allow" : "restrict", reviewedAt: at }),
        createdAt: at,
        updatedAt: at,
        eventPublished: true,
      };
      await store.create(record);
    }
    const folder = await mkdtemp(join(tmpdir(), "baseline-"));
    const [outcome] = await proposeCalibrations(
      {
        policies: new PolicyRegistry([policy]),
        store,
        objects: new FsObjectStore(folder),
        now: () => new Date("2026-12-01T00:00:00.000Z"),
      },
      { minLabels: 10 },
    );
    expect(outcome?.status).toBe("proposed");
    const proposed = JSON.parse(
      await readFile(join(folder, outcome!.status === "proposed" ? outcome!.keys.policy : ""), "utf8"),
    );
    // Live decisions are half sure (0.998) and half not (0.55): their mean confidence is about
    // 0.78; the labelled ones, all escalations, would have said 0.55.
    expect(proposed.baseline.meanConfidence).toBeGreaterThan(0.7);
    expect(proposed.baseline.meanConfidence).toBeLessThan(0.85);
    // The summary (what a drift check reads) carries the same.
    expect(outcome!.status === "proposed" && outcome!.summary!.baseline).toEqual(proposed.baseline);
  });
});
