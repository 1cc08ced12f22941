/**
 * Label-free prior correction: the prior is the mean content-free distribution; dividing it out
 * removes a model's preference for one option (a synthetic model that adds a constant to option
 * 0's logit gets its accuracy back), the pipeline applies a policy's prior before routing, and a
 * prior of the wrong length is refused.
 */
import { describe, expect, it } from "vitest";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import { correctForPrior, estimatePrior } from "../../shared/domain/calibration/prior.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

const base = {
  id: "p",
  version: 1,
  question: "Which?",
  type: "choice",
  options: ["a", "b", "c"].map((id) => ({ id, description: id, automate: true })),
  autoThreshold: 0.8,
};

describe("prior correction", () => {
  it("estimates the prior as the mean content-free distribution and divides it out", () => {
    const prior = estimatePrior([
      [2, 0, 0],
      [2, 0, 0],
    ]);
    expect(prior.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(prior[0]).toBeGreaterThan(prior[1]!);
    // A content-free answer corrected by its own prior becomes uniform.
    const corrected = softmax(correctForPrior([2, 0, 0], prior));
    for (const p of corrected) expect(p).toBeCloseTo(1 / 3, 9);
  });

  it("gives back accuracy lost to a bias toward one option, and says so in the summary", () => {
    const random = new SeededRandom(5);
    const uniform = () => random.nextUint32() / 2 ** 32;
    // Evidence favours the label by 1.5; the model adds 2 to option 0 whatever the evidence.
    const rows = Array.from({ length: 600 }, (_, i) => {
      const label = i % 3;
      const logits = [0, 1, 2].map((k) => (k === label ? 1.5 : 0) + uniform() + (k === 0 ? 2 : 0));
      return { logits, label, group: `g${i}` };
    });
    const prior = estimatePrior([
      [2, 0, 0],
      [2.1, 0.1, 0],
      [2, 0, 0.1],
    ]);
    const summary = calibratePolicy(parsePolicy(base), rows, {
      goal: { kind: "target-accuracy", accuracy: 0.9 },
      now: new Date("2026-12-01T00:00:00.000Z"),
      prior,
    });
    const withPrior = summary.comparison.candidates.find((c) => c.name === "prior")!;
    const temperatureOnly = summary.comparison.candidates.find((c) => c.name === "temperature")!;
    expect(withPrior.accuracy).toBeGreaterThan(temperatureOnly.accuracy + 0.2);
    expect(withPrior.nll).toBeLessThan(temperatureOnly.nll);
    expect(withPrior.beatsCurrent).toBe(true);
    // Vector scaling can remove the same bias from the labels; whichever is lower out of fold is proposed.
    expect(["prior", "vector"]).toContain(summary.comparison.chosen);
    if (summary.comparison.chosen === "prior") expect(summary.proposedPolicy.prior).toHaveLength(3);
    // A prior that only hurts (it favours the wrong option) is reported, not proposed.
    const harmful = calibratePolicy(parsePolicy(base), rows, {
      goal: { kind: "target-accuracy", accuracy: 0.9 },
      now: new Date("2026-12-01T00:00:00.000Z"),
      prior: [0.01, 0.495, 0.495],
    });
    expect(harmful.comparison.candidates.find((c) => c.name === "prior")!.beatsCurrent).toBe(false);
    expect(harmful.comparison.chosen).not.toBe("prior");
    expect(harmful.proposedPolicy.prior).toBeUndefined();
  });

  it("refuses a prior or offsets that do not match the options", () => {
    expect(() => parsePolicy({ ...base, prior: [0.5, 0.5] })).toThrow(
      "prior: needs one probability per option (3), got 2",
    );
    expect(() => parsePolicy({ ...base, optionBias: [0, 1] })).toThrow(
      "optionBias: needs one offset per option (3), got 2",
    );
  });
});
