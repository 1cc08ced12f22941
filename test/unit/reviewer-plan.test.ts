/**
 * What reviewers' own mistakes cost a certificate (issue 40, finding 4): the plan's figures for
 * one review and for two with adjudication, checked against simulated reviewers over seeds, and
 * the calibration report's reviewer section (accuracy per reviewer with its count and interval).
 */
import { describe, expect, it } from "vitest";
import { printPlan } from "../../cli/calibrate/calibrate-plan.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import {
  accuracyNeeded,
  labelErrorRates,
  reviewerPlanLines,
} from "../../shared/domain/calibration/certificate/reviewer-plan.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { reviewerAccuracy } from "../../shared/domain/review/review-gold.ts";
import { reviewersSectionHtml } from "../../shared/reports/calibration-report-reviewers.ts";
import { MODERATION } from "../helpers/review-flow.ts";

describe("the plan's reviewer lines", () => {
  it("say what a 2% target needs and what double review buys at 99% per reviewer", () => {
    const { single, double } = labelErrorRates(0.99);
    expect(single).toBeCloseTo(0.01, 12);
    // Both wrong alike (0.01%) plus disputes the adjudicator settles wrongly (0.02%).
    expect(double).toBeCloseTo(0.0001 + 2 * 0.01 * 0.99 * 0.01, 12);
    expect(accuracyNeeded(0.02, 1)).toBeCloseTo(0.998, 12);
    expect(accuracyNeeded(0.02, 2)).toBeGreaterThan(0.97);
    expect(accuracyNeeded(0.02, 2)).toBeLessThan(0.98);
    const lines = reviewerPlanLines(0.02);
    expect(lines[0]).toContain(
      "one review needs 99.8% accuracy per reviewer, two reviews with adjudication 97.4%",
    );
    expect(lines[1]).toContain("one review leaves 1.0% of labels wrong, 50% of the 2.0% budget");
    expect(lines[1]).toContain("two with adjudication leave 0.03% of labels wrong, 1% of the 2.0% budget");
    expect(reviewerPlanLines(0.02, 0.95)[1]).toMatch(/^reviewers at the 95\.0% measured on gold items/);
  });

  it("are printed by calibrate --plan", () => {
    const goal = { maxError: 0.02, confidence: 0.95 };
    const options = {
      policyId: MODERATION.id,
      policiesDir: "x",
      goal,
      table: undefined,
      input: "labels.jsonl",
      request: undefined,
      order: "first" as const,
      aws: {},
    };
    const { lines } = printPlan({
      policy: MODERATION,
      plan: planLabels(MODERATION, [], goal),
      where: "labels.jsonl",
      options,
    });
    expect(lines).toContain(`  ${reviewerPlanLines(0.02)[0]}`);
    expect(lines.join("\n")).toContain("two with adjudication leave 0.03% of labels wrong");
  });

  it("match simulated reviewers: two at 99% with an adjudicator leave at most the stated rate, over seeds", () => {
    const options = 4;
    const wrongOf = (random: SeededRandom, truth: number) =>
      (truth + 1 + Math.floor(random.nextFloat() * (options - 1))) % options;
    const answer = (random: SeededRandom, truth: number, accuracy: number) =>
      random.nextFloat() < accuracy ? truth : wrongOf(random, truth);
    let [single, double, items] = [0, 0, 0];
    for (let seed = 1; seed <= 20; seed++) {
      const random = new SeededRandom(seed);
      for (let i = 0; i < 20_000; i++, items++) {
        const truth = Math.floor(random.nextFloat() * options);
        const a = answer(random, truth, 0.99);
        const b = answer(random, truth, 0.99);
        if (a !== truth) single++;
        // Agreement settles; a disagreement goes to an adjudicator as accurate, who sees both.
        const settled = a === b ? a : random.nextFloat() < 0.99 ? truth : a === truth ? b : a;
        if (settled !== truth) double++;
      }
    }
    const stated = labelErrorRates(0.99);
    expect(Math.abs(single / items - stated.single)).toBeLessThan(0.001);
    expect(double / items).toBeLessThanOrEqual(stated.double + 0.0001);
    expect(double / items).toBeLessThan(single / items / 10);
  });
});

describe("the calibration report's reviewer section", () => {
  it("shows each reviewer's accuracy with its count and interval, and the plan at the target", () => {
    const gold = (answer: string, labels: [string, string][]) => ({
      gold: {
        answer,
        reviews: 2,
        loadedAt: "2026-12-01T00:00:00.000Z",
        loadedBy: "Lead",
        answers: labels.map(([id, label]) => ({
          reviewerId: id,
          reviewerName: id.toUpperCase(),
          label,
          at: "x",
        })),
      },
    });
    const records = Array.from({ length: 10 }, (_, i) =>
      gold("remove", [
        ["ana", "remove"],
        ["bo", i < 8 ? "remove" : "allow"],
      ]),
    );
    const html = reviewersSectionHtml(reviewerAccuracy(records), 0.02);
    expect(html).toContain(`<th scope="row">ANA</th><td>10 of 10</td><td>100.0%</td>`);
    expect(html).toMatch(
      /<th scope="row">BO<\/th><td>8 of 10<\/td><td>80\.0%<\/td><td>49\.\d% to 94\.\d%<\/td>/,
    );
    expect(html).toContain("at the 90.0% measured on gold items");
    expect(reviewersSectionHtml([])).toContain("decide review gold --file gold.jsonl");
  });
});
