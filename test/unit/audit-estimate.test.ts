/**
 * The audit estimator on generated decisions with a known error rate: every decision is routed by
 * the real routing (audit bands, the deterministic draw), each audited one is "labelled" with
 * the hidden truth, and the estimate is compared with the true rate over all otherwise automatic
 * decisions. A bounded, seeded property test: the interval covers the truth for at least 95% of
 * seeds, the estimate is unbiased where the plain mean of audit labels is not.
 */
import { describe, expect, it } from "vitest";
import { type AuditSample, estimateAutoError } from "../../shared/domain/audit/estimate.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { binomialUpperBound, clopperPearson } from "../../shared/domain/statistics/beta.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const SEEDS = 200;

interface Scenario {
  readonly decisions: number;
  readonly edges: number[];
  readonly rates: number[];
  /** Chance a decision with top probability p is wrong. */
  readonly wrong: (p: number) => number;
  /** Share of drawn samples a reviewer labelled. */
  readonly labelled: number;
}

/** One seed: the audit samples, the true rate over all automatable decisions, the plain mean. */
function simulate(scenario: Scenario, seed: number) {
  const policy = parsePolicy({
    ...TEAMS_POLICY,
    auditBands: { edges: scenario.edges, rates: scenario.rates },
  });
  const random = new SeededRandom(seed * 7919);
  const samples: AuditSample[] = [];
  let wrongAll = 0;
  let labelledWrong = 0;
  for (let i = 0; i < scenario.decisions; i++) {
    const p = 0.8 + 0.2 * random.nextFloat();
    const isWrong = random.nextFloat() < scenario.wrong(p);
    if (isWrong) wrongAll++;
    const routing = routeDecision(policy, [p, 1 - p], `seed-${seed}-item-${i}`);
    if (!routing.audit) throw new Error(`decision ${i} was not automatable: ${routing.reason}`);
    if (routing.reason !== "audit_sample") continue;
    const labelled = random.nextFloat() < scenario.labelled;
    if (labelled && isWrong) labelledWrong++;
    samples.push({
      stratum: routing.audit.band,
      inclusionProbability: routing.audit.inclusionProbability,
      chosen: "billing",
      ...(labelled ? { label: isWrong ? "technical" : "billing" } : {}),
    });
  }
  const estimate = estimateAutoError(samples);
  return { estimate, truth: wrongAll / scenario.decisions, naive: labelledWrong / estimate.labelled };
}

function run(scenario: Scenario) {
  let covered = 0;
  let estimates = 0;
  let truths = 0;
  let naive = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const { estimate, truth, naive: plain } = simulate(scenario, seed);
    if (estimate.interval[0] <= truth && truth <= estimate.interval[1]) covered++;
    estimates += estimate.rate;
    truths += truth;
    naive += plain;
  }
  return {
    coverage: covered / SEEDS,
    meanEstimate: estimates / SEEDS,
    meanTruth: truths / SEEDS,
    meanNaive: naive / SEEDS,
  };
}

describe("the audit estimate on decisions with a known error rate", () => {
  it("covers the truth for at least 95% of seeds and is unbiased where the plain mean is not (calibrated model, three bands)", () => {
    const result = run({
      decisions: 2000,
      edges: [0.9, 0.97],
      rates: [0.2, 0.05, 0.02],
      wrong: (p) => 1 - p,
      labelled: 1,
    });
    expect(result.coverage).toBeGreaterThanOrEqual(0.95);
    expect(Math.abs(result.meanEstimate - result.meanTruth)).toBeLessThan(0.1 * result.meanTruth);
    // The least confident band is audited most: the plain mean of audit labels overstates the rate.
    expect(result.meanNaive - result.meanTruth).toBeGreaterThan(0.25 * result.meanTruth);
  });

  it("covers the truth when only 70% of the drawn samples were labelled", () => {
    const result = run({
      decisions: 2000,
      edges: [0.9, 0.97],
      rates: [0.2, 0.05, 0.02],
      wrong: (p) => 0.5 * (1 - p),
      labelled: 0.7,
    });
    expect(result.coverage).toBeGreaterThanOrEqual(0.95);
    expect(Math.abs(result.meanEstimate - result.meanTruth)).toBeLessThan(0.1 * result.meanTruth);
  });

  it("covers the truth when the errors hide in the most confident, least audited band", () => {
    const result = run({
      decisions: 3000,
      edges: [0.9, 0.97],
      rates: [0.3, 0.1, 0.03],
      wrong: (p) => (p >= 0.97 ? 0.08 : 0.005),
      labelled: 1,
    });
    expect(result.coverage).toBeGreaterThanOrEqual(0.95);
    // Here the plain mean understates: the band that errs is the one audited least.
    expect(result.meanTruth - result.meanNaive).toBeGreaterThan(0.25 * result.meanTruth);
    expect(Math.abs(result.meanEstimate - result.meanTruth)).toBeLessThan(0.15 * result.meanTruth);
  });
});

describe("estimateAutoError", () => {
  const flat = (labels: string[]): AuditSample[] =>
    labels.map((label) => ({ stratum: "1|all", inclusionProbability: 0.1, chosen: "a", label }));

  it("reduces to the plain share and the exact interval under one flat rate", () => {
    const estimate = estimateAutoError(flat([..."aaaaaaaaab".repeat(5)]));
    expect(estimate.rate).toBeCloseTo(0.1, 12);
    expect(estimate.labelled).toBe(50);
    expect(estimate.wrong).toBe(5);
    expect(estimate.automated).toBeCloseTo(500, 9);
    // With no error at all, the upper end is the exact bound at the labels' count.
    const none = estimateAutoError(flat([..."a".repeat(60)]));
    expect(none.rate).toBe(0);
    expect(none.interval[1]).toBeCloseTo(clopperPearson(0, 60)[1], 2);
    expect(none.interval[1]).toBeGreaterThan(binomialUpperBound(0, 60, 0.95));
  });

  it("keeps unlabelled samples out of the rate and their stratum's weight out of what it covers", () => {
    const samples: AuditSample[] = [
      ...flat(["a", "a", "b", "a"]),
      { stratum: "1|>=0.99", inclusionProbability: 0.01, chosen: "a" },
    ];
    const estimate = estimateAutoError(samples);
    expect(estimate.samples).toBe(5);
    expect(estimate.labelled).toBe(4);
    expect(estimate.rate).toBeCloseTo(0.25, 12);
    expect(estimate.covered).toBeCloseTo(40 / 140, 12);
  });

  it("weights each stratum by the decisions it stands for", () => {
    // 10 of 100 decisions drawn at 0.1 (all right), 10 of 1,000 at 0.01 (half wrong).
    const samples: AuditSample[] = [
      ...Array.from({ length: 10 }, () => ({
        stratum: "low",
        inclusionProbability: 0.1,
        chosen: "a",
        label: "a",
      })),
      ...Array.from({ length: 10 }, (_, i) => ({
        stratum: "high",
        inclusionProbability: 0.01,
        chosen: "a",
        label: i % 2 ? "a" : "b",
      })),
    ];
    expect(estimateAutoError(samples).rate).toBeCloseTo(0.5 * (1000 / 1100), 12);
  });

  it("says there is no figure without labels, and refuses a probability outside (0, 1]", () => {
    const none = estimateAutoError([{ stratum: "x", inclusionProbability: 0.5, chosen: "a" }]);
    expect(Number.isNaN(none.rate)).toBe(true);
    expect(none.interval).toEqual([0, 1]);
    expect(() =>
      estimateAutoError([{ stratum: "x", inclusionProbability: 0, chosen: "a", label: "a" }]),
    ).toThrow(/inclusion probability must be in \(0, 1\]/);
  });
});

describe("exact binomial bounds", () => {
  it("match the closed forms and known values", () => {
    expect(clopperPearson(0, 10)[1]).toBeCloseTo(1 - 0.025 ** (1 / 10), 10);
    expect(binomialUpperBound(0, 300, 0.95)).toBeCloseTo(1 - 0.05 ** (1 / 300), 10);
    const [low, high] = clopperPearson(3, 1000);
    expect(low).toBeCloseTo(0.000619, 5);
    expect(high).toBeCloseTo(0.008742, 5);
    expect(clopperPearson(5, 10)[0]).toBeCloseTo(1 - clopperPearson(5, 10)[1], 10);
  });
});
