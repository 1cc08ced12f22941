/**
 * Issue 40, finding 2 ("one story"): at 5% the terminal printed the first model's certificate line
 * (`auto threshold 0.9981: wrong automatic actions ≤ 5.0% ...`) while the cascade failed and the
 * proposal carried `certificate.threshold: null`. A proposal that carries no certificate prints no
 * certificate line: the lead line says the cascade failed, and the first model's own figure,
 * where shown, says it covers that model alone.
 */
import { describe, expect, it } from "vitest";
import { thresholdLines } from "../../cli/calibrate/calibrate-print.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import type { CascadeRow } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { argmax } from "../../shared/domain/probability.ts";
import { cascadeDecisions, LARGE_SHA, SMALL_SHA } from "../helpers/cascade-rows.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const POLICY = cascadeTicketsPolicy({
  autoThreshold: 0.99,
  cascade: [{ model: "large", autoThreshold: 0.9, temperature: 1 }],
});
const goal = { kind: "max-auto-error" as const, maxError: 0.05, confidence: 0.95 };

/**
 * Labelled decisions in which `unasked` items whose first answer people always get (a top option
 * that is never automated, so passed on at every pair) lack the second model's answer.
 */
function rows(unasked: number): CascadeRow[] {
  let dropped = 0;
  return cascadeDecisions(1500, 7).map((d) => {
    const passedOn = argmax(d.firstLogits) >= 2;
    const drop = passedOn && d.secondLogits !== undefined && dropped++ < unasked;
    return {
      logits: d.firstLogits,
      label: d.label,
      key: `item-${d.index}`,
      kind: "certification" as const,
      modelSha256: SMALL_SHA,
      promptVersion: "v1",
      ...(d.secondLogits && !drop
        ? { secondLogits: d.secondLogits, secondModelSha256: LARGE_SHA, secondPromptVersion: "v1" }
        : {}),
    };
  });
}

describe("a cascade's certificate line", () => {
  it("is not printed when the cascade fails, though the first model alone would be certified", () => {
    const summary = calibratePolicy(POLICY, rows(1), { goal, now: new Date("2026-12-02T00:00:00Z") });
    expect(summary.certificate?.threshold).not.toBeNull();
    expect(summary.cascade?.result.thresholds).toBeNull();
    expect(summary.proposedPolicy.certificate?.threshold).toBeNull();
    const lines = thresholdLines(summary);
    expect(lines[0]).toMatch(
      /^ {2}no certificate: applying this sends every item to people \(cascade: no pair/,
    );
    expect(lines.some((l) => /^ {2}auto threshold/.test(l))).toBe(false);
    expect(lines.join("\n")).not.toMatch(/beside the 95%/);
    expect(lines.join("\n")).toMatch(
      /the first model alone \(not what this version applies: large acts too\): auto threshold/,
    );
  });

  it("leads with the pair over both models when the cascade is certified", () => {
    const summary = calibratePolicy(POLICY, rows(0), { goal, now: new Date("2026-12-02T00:00:00Z") });
    expect(summary.cascade?.result.thresholds).not.toBeNull();
    const lines = thresholdLines(summary);
    expect(lines[0]).toMatch(/^ {2}cascade: the first model acts at/);
    expect(lines.some((l) => /^ {2}auto threshold/.test(l))).toBe(false);
  });
});
