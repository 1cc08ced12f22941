/**
 * Certified automatic action against ground truth: the exact binomial bound matches its closed
 * form; on generated labelled sets whose true rate of wrong automatic actions is known at every
 * threshold, the certified threshold's true rate is under the target for at least 95% of seeds
 * (the threshold reading the empirical curve, as before, misses far more often); when no
 * threshold qualifies, it says so and how many labels would be needed, and that many labels at
 * that rate do certify.
 */
import { describe, expect, it } from "vitest";
import {
  binomialCdf,
  clopperPearsonUpper,
  trialsNeeded,
} from "../../shared/domain/calibration/certificate/binomial.ts";
import {
  CERTIFICATE_GRID,
  type CertifiedItem,
  certificateSentence,
  certifyThreshold,
} from "../../shared/domain/calibration/certificate/certificate.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

/**
 * Items whose top probability is c = 1 − u³/2 (u uniform: confidences crowd near 1, as a model's
 * do) and wrong with probability 1 − c. Among the items a threshold λ automates the true rate is
 * E[u³/2 | u³/2 ≤ 1 − λ] = (1 − λ)/4 (u³/2 is uniform on the fraction of [0, 1/2] it can reach).
 */
function generated(n: number, seed: number): CertifiedItem[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: n }, () => {
    const c = 1 - random.nextFloat() ** 3 / 2;
    return { confidence: c, wrong: random.nextFloat() < 1 - c, automatable: true };
  });
}
const trueRate = (threshold: number) => (1 - threshold) / 4;

/** The lowest grid threshold whose observed rate is under the target: reading the curve, no bound. */
function empiricalThreshold(items: readonly CertifiedItem[], target: number): number | null {
  let chosen: number | null = null;
  for (const t of CERTIFICATE_GRID) {
    const automated = items.filter((i) => i.confidence >= t);
    if (automated.length > 0 && automated.filter((i) => i.wrong).length / automated.length <= target)
      chosen = t;
  }
  return chosen;
}

describe("the exact binomial bound", () => {
  it("matches the closed form with no errors and a direct sum otherwise", () => {
    for (const n of [10, 149, 1000])
      expect(clopperPearsonUpper(0, n, 0.95)).toBeCloseTo(1 - 0.05 ** (1 / n), 9);
    let direct = 0;
    for (let k = 0; k <= 3; k++) {
      let choose = 1;
      for (let i = 0; i < k; i++) choose = (choose * (100 - i)) / (i + 1);
      direct += choose * 0.03 ** k * 0.97 ** (100 - k);
    }
    expect(binomialCdf(3, 100, 0.03)).toBeCloseTo(direct, 12);
    // At the bound, seeing that few errors is exactly as unlikely as the confidence allows.
    expect(binomialCdf(3, 100, clopperPearsonUpper(3, 100, 0.95))).toBeCloseTo(0.05, 9);
    expect(trialsNeeded(0, 0.02, 0.95)).toBe(149);
    expect(trialsNeeded(0.03, 0.02, 0.95)).toBeUndefined();
  });
});

describe("certifyThreshold", () => {
  for (const target of [0.02, 0.05]) {
    it(`keeps the true rate under ${target} for at least 95% of 200 seeds; reading the curve does not`, () => {
      const seeds = 200;
      let held = 0;
      let certified = 0;
      let empiricalHeld = 0;
      for (let seed = 1; seed <= seeds; seed++) {
        const items = generated(1500, seed);
        const result = certifyThreshold(items, { maxError: target, confidence: 0.95 });
        if (result.threshold !== null) {
          certified++;
          expect(result.bound).toBeLessThanOrEqual(target);
          expect(result.automated).toBe(items.filter((i) => i.confidence >= result.threshold!).length);
        }
        if (result.threshold === null || trueRate(result.threshold) <= target) held++;
        const empirical = empiricalThreshold(items, target);
        if (empirical === null || trueRate(empirical) <= target) empiricalHeld++;
      }
      expect(held / seeds).toBeGreaterThanOrEqual(0.95);
      // Not vacuous: it certifies nearly always, and the curve it guards against misleads often.
      expect(certified / seeds).toBeGreaterThan(0.9);
      expect(empiricalHeld / seeds).toBeLessThan(0.8);
    });
  }

  it("says so when no threshold qualifies, keeps everything with people, and names the labels needed", () => {
    // 1 wrong in 100 at 0.99: under a 2% target, but 100 labels cannot show it with 95% confidence.
    const few = Array.from({ length: 100 }, (_, i) => ({
      confidence: 0.995,
      wrong: i === 0,
      automatable: true,
    }));
    const result = certifyThreshold(few, { maxError: 0.02, confidence: 0.95 });
    expect(result.threshold).toBeNull();
    expect(result.coverage).toBe(0);
    const needed = result.labelsNeeded!.labels!;
    expect(certificateSentence(result)).toMatch(
      new RegExp(
        `^no certificate: applying this sends every item to people \\(no auto threshold keeps wrong automatic actions ≤ 2\\.0% with 95% confidence on these 100 labels\\); at the observed error rate \\(1\\.0%: 1 of 100 automated at 0\\.995\\) about ${needed.toLocaleString("en-US").replace(",", "\\,")} labels would be needed, ${needed.toLocaleString("en-US").replace(",", "\\,")} of them of items it would automate \\[learn-then-test on the labels held, not pre-registered\\]$`,
      ),
    );
    // That many labels at the same rate do certify.
    const enough = Array.from({ length: needed }, (_, i) => ({
      confidence: 0.995,
      wrong: i % 100 === 0,
      automatable: true,
    }));
    const certified = certifyThreshold(enough, { maxError: 0.02, confidence: 0.95 });
    expect(certified.threshold).not.toBeNull();
    expect(certified.automated).toBe(needed);
    // A rate above the target: no number of labels would do.
    const poor = few.map((item, i) => ({ ...item, wrong: i < 5 }));
    expect(certificateSentence(certifyThreshold(poor, { maxError: 0.02, confidence: 0.95 }))).toMatch(
      /not below the target, so more labels will not certify it/,
    );
  });

  it("counts only items whose top option may be automated, and prints the certified line", () => {
    const items = generated(2000, 7).map((item, i) => ({ ...item, automatable: i % 4 !== 0 }));
    const result = certifyThreshold(items, { maxError: 0.02, confidence: 0.95 });
    expect(result.threshold).not.toBeNull();
    const automated = items.filter((i) => i.automatable && i.confidence >= result.threshold!);
    expect(result.automated).toBe(automated.length);
    expect(result.coverage).toBeCloseTo(automated.length / 2000, 12);
    expect(certificateSentence(result)).toBe(
      `auto threshold ${result.threshold}: wrong automatic actions ≤ 2.0% with 95% confidence (observed ${result.errors} of ${result.automated} automated, coverage ${(result.coverage * 100).toFixed(1)}%) [learn-then-test on the labels held, not pre-registered]`,
    );
  });
});
