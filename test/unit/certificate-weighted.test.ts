/**
 * The certificate counts only labels that may back it, each as what it stands for (issue 33,
 * item 3), checked over many seeds on labelled sets shaped as the product collects them
 * (`test/helpers/review-flow.ts`: escalations all labelled, audit samples at 20%, 5% and 2% by
 * band, a certification sample drawn evenly, near-duplicates in groups), with the truth measured
 * on fresh decisions of the same model:
 *
 * - the selected-sample case: a model wrong 3.6% of the time in its most confident band, so no
 *   threshold truly reaches 2%. Counted unweighted (as before), the routing's labels certified 2%
 *   in some seeds and every one of those was wrong; weighted by their chance of being labelled,
 *   none is;
 * - groups of 3 and of 10 near-duplicates sharing one label: counted item by item the claim held
 *   for 85% and 72% of 150 seeds (at a 5% target); one vote per group held it for 97% and 98%;
 * - a realistic review flow (escalations, audits, a certification sample) with the map refitted on
 *   the same labels and two options that are never automated: the claim holds for at least 95% of
 *   seeds, and the certificate is not vacuous;
 * - the weighted (Fay–Feuer) bound alone covers a weighted rate for at least 95% of draws.
 */
import { describe, expect, it } from "vitest";
import {
  CERTIFICATE_GRID,
  certifyThreshold,
} from "../../shared/domain/calibration/certificate/certificate.ts";
import type { CertifiedItem } from "../../shared/domain/calibration/certificate/certificate-units.ts";
import { certifiedItems } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { boundOf, evidenceOf } from "../../shared/domain/calibration/certificate/weighted-bound.ts";
import { fitTemperature } from "../../shared/domain/calibration/temperature.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { type FlowShape, MODERATION, reviewFlow, trueRate } from "../helpers/review-flow.ts";

const GOAL = { maxError: 0.02, confidence: 0.95 };

describe("labels as the routing selects them", () => {
  it("certify nothing wrong where the model is wrong most in its most confident, least audited band", () => {
    const shape: FlowShape = {
      decisions: 6_000,
      trueTemperature: 0.5,
      confidentlyWrong: { above: 0.99, rate: 0.036 },
    };
    const map = { temperature: 1 };
    // No threshold truly reaches 2%: the most confident decisions are the most often wrong.
    for (const t of [0.5, 0.85, 0.95, 0.99]) expect(trueRate(shape, map, t)!).toBeGreaterThan(0.025);
    let [unweighted, weighted] = [0, 0];
    const seeds = 100;
    for (let seed = 1; seed <= seeds; seed++) {
      const items = certifiedItems(MODERATION, reviewFlow(shape, seed), map);
      const pooled = certifyThreshold(
        items.map((i) => ({ ...i, inclusionProbability: 1 })),
        GOAL,
      );
      if (pooled.threshold !== null) unweighted++;
      if (certifyThreshold(items, GOAL).threshold !== null) weighted++;
    }
    // Before: escalations and the heavily audited low band outvoted the rest.
    expect(unweighted).toBeGreaterThanOrEqual(5);
    expect(weighted).toBe(0);
  });
});

/** Items whose top probability is c = 1 − u³/2, wrong with probability 1 − c, in groups sharing one label. */
function grouped(groups: number, size: number, seed: number): CertifiedItem[] {
  const random = new SeededRandom(seed * 31 + size);
  return Array.from({ length: groups }, (_, g) => {
    const c = 1 - random.nextFloat() ** 3 / 2;
    const wrong = random.nextFloat() < 1 - c;
    // Near-duplicates: the same confidence give or take a little, the same label.
    return Array.from({ length: size }, (_, k) => ({
      confidence: Math.min(1, c + (random.nextFloat() - 0.5) * 1e-4),
      wrong,
      automatable: true,
      group: `g${g}`,
      key: `g${g}/${k}`,
    }));
  }).flat();
}

describe("near-duplicates sharing one label", () => {
  for (const size of [3, 10])
    it(`keep the claim for at least 95% of seeds in groups of ${size} when a group has one vote`, () => {
      const seeds = 100;
      const goal = { maxError: 0.05, confidence: 0.95 };
      let [held, heldItemByItem, certified] = [0, 0, 0];
      for (let seed = 1; seed <= seeds; seed++) {
        const items = grouped(Math.round(2_000 / size), size, seed);
        const truth = (t: number) => (1 - t) / 4;
        const once = certifyThreshold(items, goal);
        if (once.threshold !== null) certified++;
        if (once.threshold === null || truth(once.threshold) <= goal.maxError) held++;
        const apart = certifyThreshold(
          items.map(({ group: _, ...i }) => i),
          goal,
        );
        if (apart.threshold === null || truth(apart.threshold) <= goal.maxError) heldItemByItem++;
      }
      expect(held / seeds).toBeGreaterThanOrEqual(0.95);
      expect(heldItemByItem / seeds).toBeLessThan(size === 3 ? 0.95 : 0.85);
      expect(certified / seeds).toBeGreaterThan(0.3);
    });
});

describe("a realistic review flow", () => {
  it("keeps the claim for at least 95% of seeds with the map refitted on the same labels", () => {
    const shape: FlowShape = {
      decisions: 2_500,
      trueTemperature: 1.3,
      certification: { above: 0.9, size: 250 },
    };
    const seeds = 80;
    let [held, certified] = [0, 0];
    for (let seed = 1; seed <= seeds; seed++) {
      const rows = reviewFlow(shape, seed);
      const map = { temperature: fitTemperature(rows) };
      const result = certifyThreshold(certifiedItems(MODERATION, rows, map), GOAL);
      if (result.threshold !== null) certified++;
      if (result.threshold === null || trueRate(shape, map, result.threshold)! <= GOAL.maxError) held++;
    }
    expect(held / seeds).toBeGreaterThanOrEqual(0.95);
    expect(certified / seeds).toBeGreaterThan(0.3);
  });
});

describe("the weighted bound", () => {
  it("covers a weighted rate for at least 95% of draws, on the grid's extremes of unequal weights", () => {
    let [covered, draws] = [0, 0];
    for (let seed = 1; seed <= 400; seed++) {
      const random = new SeededRandom(seed);
      // Three strata: many light labels, some heavier, a few standing for 50 decisions each.
      const strata = [
        { n: 200, weight: 1, rate: 0.005 },
        { n: 60, weight: 10, rate: 0.02 },
        { n: 30, weight: 50, rate: 0.03 },
      ];
      const units = strata.flatMap((s) =>
        Array.from({ length: s.n }, () => ({ weight: s.weight, wrong: random.nextFloat() < s.rate })),
      );
      const total = strata.reduce((sum, s) => sum + s.n * s.weight, 0);
      const truth = strata.reduce((sum, s) => sum + s.n * s.weight * s.rate, 0) / total;
      draws++;
      if (boundOf(evidenceOf(units), 0.95) >= truth) covered++;
    }
    expect(covered / draws).toBeGreaterThanOrEqual(0.95);
    // The grid of thresholds is what the fixed sequence walks.
    expect(CERTIFICATE_GRID[0]).toBe(0.9999);
  });
});
