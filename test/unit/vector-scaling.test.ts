/**
 * Vector scaling against ground truth: logits drawn at random, labels drawn from a known
 * softmax(logits / T + b); the fit recovers T and the (centred) offsets. Without a bias, it finds
 * offsets near zero, and the calibration proposes it only when out-of-fold NLL improves.
 */
import { describe, expect, it } from "vitest";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import { applyVectorScaling, fitVectorScaling } from "../../shared/domain/calibration/vector-scaling.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { FOUR_OPTIONS_POLICY } from "../helpers/policies.ts";

function sample(count: number, temperature: number, bias: number[], seed: number): LabelledLogits[] {
  const random = new SeededRandom(seed);
  const uniform = () => random.nextUint32() / 2 ** 32;
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return Array.from({ length: count }, (_, i) => {
    const logits = bias.map(() => 3 * normal());
    const p = applyVectorScaling(logits, { temperature, bias });
    let u = uniform();
    let label = p.length - 1;
    for (let k = 0; k < p.length; k++) {
      u -= p[k]!;
      if (u <= 0) {
        label = k;
        break;
      }
    }
    return { logits, label, group: `g${i}` };
  });
}

describe("vector scaling", () => {
  it("recovers a known temperature and per-option bias", () => {
    const truth = { temperature: 2, bias: [0.9, -0.3, -0.1, -0.5] };
    const fitted = fitVectorScaling(sample(6000, truth.temperature, truth.bias, 7));
    expect(fitted.temperature).toBeGreaterThan(1.8);
    expect(fitted.temperature).toBeLessThan(2.2);
    for (const [k, b] of truth.bias.entries()) expect(Math.abs(fitted.bias[k]! - b)).toBeLessThan(0.12);
  });

  it("finds offsets near zero without a bias, and calibration proposes it only when out-of-fold NLL improves", () => {
    const unbiased = fitVectorScaling(sample(6000, 1.5, [0, 0, 0, 0], 11));
    for (const b of unbiased.bias) expect(Math.abs(b)).toBeLessThan(0.1);
    const policy = FOUR_OPTIONS_POLICY;
    const options = { goal: { kind: "target-accuracy" as const, accuracy: 0.9 }, now: new Date() };
    const biased = calibratePolicy(policy, sample(3000, 2, [1.2, -0.4, -0.4, -0.4], 3), options);
    const vector = biased.comparison.candidates.find((c) => c.name === "vector")!;
    const temperature = biased.comparison.candidates.find((c) => c.name === "temperature")!;
    expect(biased.comparison.chosen).toBe("vector");
    expect(vector.nll).toBeLessThan(temperature.nll);
    expect(vector.changedChoices).toBeGreaterThan(0);
    expect(biased.proposedPolicy.optionBias).toHaveLength(4);
    const plain = calibratePolicy(policy, sample(3000, 2, [0, 0, 0, 0], 5), options);
    if (plain.comparison.chosen !== "vector") expect(plain.proposedPolicy.optionBias).toBeUndefined();
    else expect(plain.comparison.candidates.find((c) => c.name === "vector")!.beatsCurrent).toBe(true);
  });
});
