/**
 * Calibration math against ground truth: a known temperature is recovered, ECE matches a
 * hand-computed example exactly, thresholds and conformal sets behave on constructed data.
 */
import { describe, expect, it } from "vitest";
import { evaluateSets, fitConformal, predictionSet } from "../../shared/domain/calibration/conformal.ts";
import {
  accuracy,
  brierScore,
  confusionMatrix,
  expectedCalibrationError,
  negativeLogLikelihood,
  reliabilityBins,
  riskCoverage,
} from "../../shared/domain/calibration/metrics.ts";
import {
  fitTemperature,
  type LabelledLogits,
  outOfFold,
} from "../../shared/domain/calibration/temperature.ts";
import { chooseThreshold } from "../../shared/domain/calibration/threshold.ts";
import { wilsonInterval } from "../../shared/domain/calibration/uncertainty.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

/** Items whose labels are drawn from softmax(u); the model reports u · t, so T = t calibrates it. */
function fromKnownTemperature(t: number, n: number, options = 4, seed = 3): LabelledLogits[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: n }, (_, i) => {
    const u = Array.from({ length: options }, () => (random.nextFloat() * 2 - 1) * 3);
    const p = softmax(u);
    let draw = random.nextFloat();
    let label = 0;
    while (label < options - 1 && draw > p[label]!) draw -= p[label++]!;
    return { logits: u.map((v) => v * t), label, group: `g${i % 400}` };
  });
}

describe("temperature", () => {
  for (const t of [0.5, 1.6, 3]) {
    it(`recovers a known temperature of ${t} within 2%`, () => {
      const fitted = fitTemperature(fromKnownTemperature(t, 6000));
      expect(Math.abs(fitted - t) / t).toBeLessThan(0.02);
    });
  }

  it("lowers out-of-fold ECE of overconfident logits and never changes the chosen option", () => {
    const rows = fromKnownTemperature(2.5, 3000);
    const raw = rows.map((r) => ({ probabilities: softmax(r.logits), label: r.label }));
    const { calibrated, temperatures } = outOfFold(rows, 5);
    expect(temperatures.every((t) => Math.abs(t - 2.5) / 2.5 < 0.1)).toBe(true);
    expect(expectedCalibrationError(calibrated)).toBeLessThan(expectedCalibrationError(raw) / 2);
    calibrated.forEach((c, i) => {
      expect(c.probabilities.indexOf(Math.max(...c.probabilities))).toBe(
        raw[i]!.probabilities.indexOf(Math.max(...raw[i]!.probabilities)),
      );
    });
  });
});

describe("metrics", () => {
  // Hand-computed: bins of width 0.1 (10 bins).
  //   confidence 0.95 (correct), 0.95 (wrong) -> bin [0.9,1): acc 0.5, conf 0.95, |gap| 0.45, weight 2/5
  //   confidence 0.75 (correct), 0.75 (correct) -> bin [0.7,0.8): acc 1, conf 0.75, gap 0.25, weight 2/5
  //   confidence 0.55 (wrong) -> bin [0.5,0.6): acc 0, conf 0.55, gap 0.55, weight 1/5
  //   ECE = 0.4·0.45 + 0.4·0.25 + 0.2·0.55 = 0.18 + 0.10 + 0.11 = 0.39
  const rows = [
    { probabilities: [0.95, 0.05], label: 0 },
    { probabilities: [0.05, 0.95], label: 0 },
    { probabilities: [0.75, 0.25], label: 0 },
    { probabilities: [0.25, 0.75], label: 1 },
    { probabilities: [0.55, 0.45], label: 1 },
  ];

  it("computes ECE exactly as by hand", () => {
    expect(expectedCalibrationError(rows)).toBeCloseTo(0.39, 12);
    const bins = reliabilityBins(rows);
    expect(bins).toHaveLength(10);
    expect(bins[9]).toMatchObject({ count: 2, accuracy: 0.5 });
    expect(bins[9]!.confidence).toBeCloseTo(0.95, 12);
  });

  it("computes accuracy, Brier, NLL and confusion", () => {
    expect(accuracy(rows)).toBeCloseTo(3 / 5, 12);
    const brier = (0.05 ** 2 * 2 + 0.95 ** 2 * 2 + 0.25 ** 2 * 2 + 0.25 ** 2 * 2 + 0.55 ** 2 * 2) / 5;
    expect(brierScore(rows)).toBeCloseTo(brier, 12);
    expect(negativeLogLikelihood(rows)).toBeCloseTo(
      -(Math.log(0.95) + Math.log(0.05) + Math.log(0.75) + Math.log(0.75) + Math.log(0.45)) / 5,
      12,
    );
    expect(confusionMatrix(rows, 2)).toEqual([
      [2, 1],
      [1, 1],
    ]);
  });

  it("draws equal-mass bins with the same number of items", () => {
    expect(reliabilityBins(rows, 5, "equal-mass").map((b) => b.count)).toEqual([1, 1, 1, 1, 1]);
  });

  it("traces risk against coverage, most confident first", () => {
    const { points, aurc } = riskCoverage(rows);
    expect(points.map((p) => p.coverage)).toEqual([0.4, 0.8, 1]);
    expect(points.map((p) => p.risk)).toEqual([0.5, 0.25, 0.4]);
    // Risk after each item: 1 (or 0), 0.5, 1/3 (or 2/3)... mean over the five prefixes.
    expect(aurc).toBeGreaterThan(0);
    expect(aurc).toBeLessThan(1);
  });
});

describe("thresholds", () => {
  // 1,000 items: the top 600 (confidence 0.99) are all right, the next 400 (0.6) are 50% right.
  const constructed = Array.from({ length: 1000 }, (_, i) => ({
    probabilities: i < 600 ? [0.99, 0.01] : [0.6, 0.4],
    label: i < 600 ? 0 : i % 2,
  }));

  it("picks the largest coverage whose automated accuracy meets the target with 95% confidence", () => {
    const choice = chooseThreshold(constructed, { kind: "target-accuracy", accuracy: 0.97 });
    expect(choice.threshold).toBe(0.99);
    expect(choice.coverage).toBe(0.6);
    expect(choice.automatedAccuracy).toBe(1);
    expect(choice.automatedAccuracyInterval[0]).toBeGreaterThan(0.97);
    expect(choice.notes).toEqual([]);
  });

  it("weighs a wrong automatic action against a review with a cost matrix", () => {
    // Automating the 0.6 block costs 0.5 · 10 per item; reviewing costs 1: stop at 600.
    expect(chooseThreshold(constructed, { kind: "cost", wrongAutomatic: 10, humanReview: 1 }).coverage).toBe(
      0.6,
    );
    // When reviews are dearer than half a mistake, automating everything is cheaper.
    expect(chooseThreshold(constructed, { kind: "cost", wrongAutomatic: 1, humanReview: 1 }).coverage).toBe(
      1,
    );
  });

  it("leaves items whose top option may not be automated with people, in neither coverage nor accuracy", () => {
    // 200 more items, surest of all and all wrong, whose top option (1) always goes to a person.
    const withHeld = [
      ...Array.from({ length: 200 }, () => ({ probabilities: [0.001, 0.999], label: 0 })),
      ...constructed,
    ];
    const automatable = withHeld.map((r) => r.probabilities[1]! < 0.5);
    const choice = chooseThreshold(withHeld, { kind: "target-accuracy", accuracy: 0.97 }, { automatable });
    expect(choice.threshold).toBe(0.99);
    expect(choice.coverage).toBe(600 / 1200);
    expect(choice.automatedAccuracy).toBe(1);
    // Counted as if they could be automated, they sink every threshold.
    expect(chooseThreshold(withHeld, { kind: "target-accuracy", accuracy: 0.97 }).coverage).toBe(0);
  });

  it("keeps a human floor and says so when labels are few, and automates nothing when the target is out of reach", () => {
    const few = constructed.filter((_, i) => i % 10 === 0);
    const choice = chooseThreshold(few, { kind: "cost", wrongAutomatic: 1, humanReview: 1 });
    expect(choice.coverage).toBeLessThanOrEqual(0.8);
    expect(choice.notes[0]).toMatch(/only 100 labels/);
    const unreachable = chooseThreshold(constructed.slice(600), { kind: "target-accuracy", accuracy: 0.97 });
    expect(unreachable.coverage).toBe(0);
    expect(unreachable.notes.join(" ")).toMatch(/no threshold reaches/);
  });

  it("computes the Wilson interval", () => {
    const [lo, hi] = wilsonInterval(95, 100);
    expect(lo).toBeCloseTo(0.8883, 3);
    expect(hi).toBeCloseTo(0.9785, 3);
  });
});

describe("conformal sets", () => {
  it("reach the target coverage on held-out data", () => {
    const rows = fromKnownTemperature(1, 4000, 5, 9).map((r) => ({
      probabilities: softmax(r.logits),
      label: r.label,
    }));
    const rule = fitConformal(rows.slice(0, 2000), 0.9);
    const held = evaluateSets(rows.slice(2000), rule);
    expect(held.coverage).toBeGreaterThan(0.87);
    expect(held.coverage).toBeLessThan(0.94);
    expect(held.meanSize).toBeGreaterThan(1);
    expect(predictionSet([0.7, 0.2, 0.1], { minProbability: 0.15 })).toEqual([0, 1]);
  });
});

describe("drift", async () => {
  const { checkDrift } = await import("../../shared/domain/calibration/drift.ts");
  const baseline = {
    meanConfidence: 0.9,
    escalationRate: 0.2,
    optionMix: [0.5, 0.5],
    meanAllowedTokenMass: 0.8,
  };
  const steady = Array.from({ length: 100 }, (_, i) => ({
    probabilities: i % 2 ? [0.9, 0.1] : [0.1, 0.9],
    route: (i % 5 === 0 ? "human" : "auto") as "human" | "auto",
    allowedTokenMass: 0.8,
  }));

  it("stays quiet when recent decisions look like the baseline", () => {
    const result = checkDrift(baseline, steady);
    expect(result.drifted).toBe(false);
    expect(result.checks.map((c) => c.name)).toEqual([
      "mean_confidence",
      "escalation_rate",
      "option_mix",
      "allowed_token_mass",
    ]);
  });

  it("flags each kind of drift", () => {
    const unsure = steady.map((d) => ({
      ...d,
      probabilities: d.probabilities.map((p) => (p > 0.5 ? 0.6 : 0.4)),
    }));
    expect(checkDrift(baseline, unsure).checks.find((c) => c.name === "mean_confidence")!.drifted).toBe(true);
    const escalated = steady.map((d) => ({ ...d, route: "human" as const }));
    expect(checkDrift(baseline, escalated).checks.find((c) => c.name === "escalation_rate")!.drifted).toBe(
      true,
    );
    const skewed = steady.map((d) => ({ ...d, probabilities: [0.9, 0.1] }));
    expect(checkDrift(baseline, skewed).checks.find((c) => c.name === "option_mix")!.drifted).toBe(true);
    const elsewhere = steady.map((d) => ({ ...d, allowedTokenMass: 0.3 }));
    const result = checkDrift(baseline, elsewhere);
    expect(result.drifted).toBe(true);
    expect(result.checks.find((c) => c.name === "allowed_token_mass")!.drifted).toBe(true);
  });
});
