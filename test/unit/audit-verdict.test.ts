/**
 * The audit verdict against an error budget has three states, each with its evidence (issue 33,
 * item 5; issue 36, item 4), checked on simulated audit windows drawn as the pipeline draws them
 * (bands audited at different rates, each sample wrong with its band's true rate):
 *
 * - a policy at 0.2% true error under a 3% budget is never called over budget, where the old
 *   check (the interval's upper end above the budget) flagged it in most windows;
 * - one exactly at its budget is called over in at most the stated 2.5% of windows, and one at
 *   8% under a 3% budget is called over in most;
 * - 0 wrong of 237 audit labels is never over a 5% budget (it read "over" before);
 * - no audit label at all, labels that speak for only 4.8% or 33% of automatic decisions, or
 *   reviewers who skip the hard samples, never read "within budget" (all three did before).
 */
import { describe, expect, it } from "vitest";
import { estimateAutoError } from "../../shared/domain/audit/estimate.ts";
import { budgetVerdict, type VerdictSample } from "../../shared/domain/audit/verdict.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

interface Band {
  readonly name: string;
  /** Automatic decisions in the window. */
  readonly decisions: number;
  readonly auditRate: number;
  readonly trueRate: number;
}

/** One window's audit samples: each decision drawn at its band's rate, wrong at its band's truth. */
function window(bands: readonly Band[], seed: number): VerdictSample[] {
  const random = new SeededRandom(seed * 104_729);
  const samples: VerdictSample[] = [];
  for (const band of bands)
    for (let i = 0; i < band.decisions; i++) {
      if (random.nextFloat() >= band.auditRate) continue;
      const wrong = random.nextFloat() < band.trueRate;
      samples.push({
        stratum: `1|${band.name}`,
        inclusionProbability: band.auditRate,
        chosen: "allow",
        label: wrong ? "remove" : "allow",
      });
    }
  return samples;
}

const bands = (decisions: number, rates: readonly number[], trueRate: number): Band[] =>
  ["<0.95", "0.95-0.99", ">=0.99"].map((name, i) => ({
    name,
    decisions: decisions * [0.2, 0.3, 0.5][i]!,
    auditRate: rates[i]!,
    trueRate,
  }));

/** States over `windows` seeds, and how often the old rule (upper end above the budget) flagged. */
function states(of: (seed: number) => VerdictSample[], budget: number, windows: number) {
  const counts = { within_budget: 0, over_budget: 0, not_enough_labels: 0, oldFlagged: 0 };
  for (let seed = 1; seed <= windows; seed++) {
    const samples = of(seed);
    counts[budgetVerdict(samples, budget).state]++;
    if (estimateAutoError(samples).interval[1] > budget) counts.oldFlagged++;
  }
  return counts;
}

describe("the budget verdict on simulated audit windows", () => {
  it("never calls a policy at 0.2% true error over a 3% budget (2,000 windows); the old check flagged most", () => {
    const result = states((seed) => window(bands(2_000, [0.05, 0.02, 0.01], 0.002), seed), 0.03, 2_000);
    expect(result.over_budget).toBe(0);
    expect(result.oldFlagged).toBeGreaterThan(1_800);
    // With about 40 labels a window, most windows cannot show 3% either way: they say so.
    expect(result.not_enough_labels + result.within_budget).toBe(2_000);
    // With ten times the traffic the same audit rates show it within budget in most windows.
    const busy = states((seed) => window(bands(20_000, [0.05, 0.02, 0.01], 0.002), seed), 0.03, 200);
    expect(busy.over_budget).toBe(0);
    expect(busy.within_budget).toBeGreaterThan(150);
  });

  it("calls a policy exactly at its budget over in at most the stated 2.5% of windows, and one far over in most", () => {
    const at = states((seed) => window(bands(4_000, [0.25, 0.12, 0.08], 0.03), seed), 0.03, 600);
    expect(at.over_budget / 600).toBeLessThanOrEqual(0.025);
    const over = states((seed) => window(bands(4_000, [0.25, 0.12, 0.08], 0.08), seed), 0.03, 150);
    expect(over.over_budget / 150).toBeGreaterThan(0.9);
  });

  it("never reads 0 wrong of 237 audit labels as over a 5% budget (the old check did)", () => {
    const label = (stratum: string, inclusionProbability: number): VerdictSample => ({
      stratum,
      inclusionProbability,
      chosen: "allow",
      label: "allow",
    });
    // 200 labels of a band audited at 50%, 37 of one audited at 1% that stands for most decisions.
    const samples = [
      ...Array.from({ length: 200 }, () => label("1|<0.95", 0.5)),
      ...Array.from({ length: 37 }, () => label("1|>=0.99", 0.01)),
    ];
    expect(estimateAutoError(samples).interval[1]).toBeGreaterThan(0.05);
    const verdict = budgetVerdict(samples, 0.05);
    expect(verdict.state).toBe("not_enough_labels");
    expect(verdict.lower).toBe(0);
    // In one band audited alike, the same 237 labels show it within the budget.
    const even = budgetVerdict(
      Array.from({ length: 237 }, () => label("1|all", 0.05)),
      0.05,
    );
    expect(even.state).toBe("within_budget");
    expect(even.upper).toBeLessThan(0.02);
  });

  it("says not enough labels, with how many per band would settle it, when nothing is labelled", () => {
    expect(budgetVerdict([], 0.03)).toMatchObject({ state: "not_enough_labels", lower: 0, upper: 1 });
    const waiting = Array.from(
      { length: 12 },
      (_, i): VerdictSample => ({
        stratum: `1|${i % 2 ? ">=0.99" : "<0.95"}`,
        inclusionProbability: 0.05,
        chosen: "allow",
      }),
    );
    const verdict = budgetVerdict(waiting, 0.03);
    expect(verdict.state).toBe("not_enough_labels");
    expect(verdict.unanswered).toBe(12);
    expect(verdict.toSettle!.every((s) => s.more >= 6)).toBe(true);
  });

  it.each([
    [0.048, 0.048],
    [0.33, 0.33],
  ])("never reads within budget when labels speak for only %s of automatic decisions", (share) => {
    // Labelled samples of one band, no label yet in the other (which stands for 1 - share).
    const labelledBand = Array.from(
      { length: 400 },
      (): VerdictSample => ({
        stratum: "1|a",
        inclusionProbability: 0.5,
        chosen: "allow",
        label: "allow",
      }),
    );
    const weightOther = (800 * (1 - share)) / share;
    const unlabelled = Array.from(
      { length: 20 },
      (): VerdictSample => ({
        stratum: "1|b",
        inclusionProbability: 20 / weightOther,
        chosen: "allow",
      }),
    );
    const samples = [...labelledBand, ...unlabelled];
    expect(estimateAutoError(samples).covered).toBeCloseTo(share, 3);
    // The labelled part alone is far under the budget: the old check said within.
    expect(estimateAutoError(samples).interval[1]).toBeLessThan(0.03);
    const verdict = budgetVerdict(samples, 0.03);
    expect(verdict.state).toBe("not_enough_labels");
    expect(verdict.covered).toBeCloseTo(share, 3);
    expect(verdict.toSettle!.find((s) => s.stratum === "1|b")!.more).toBeGreaterThanOrEqual(20);
  });

  it("does not let reviewers who skip the hard samples buy a within (the estimate drops, the verdict does not)", () => {
    const random = new SeededRandom(17);
    // 1,000 samples at 2.5% true error under a 3% budget; reviewers leave 60% of the wrong ones unlabelled.
    const samples = Array.from({ length: 1_000 }, (): VerdictSample => {
      const wrong = random.nextFloat() < 0.025;
      const skipped = wrong && random.nextFloat() < 0.6;
      const base = { stratum: "1|all", inclusionProbability: 0.1, chosen: "allow" };
      return skipped ? { ...base, overdue: true } : { ...base, label: wrong ? "remove" : "allow" };
    });
    const estimate = estimateAutoError(samples);
    expect(estimate.rate).toBeLessThan(0.02);
    // Before: the upper end of the estimate's interval was within 3%, so "within budget".
    expect(estimate.interval[1]).toBeLessThanOrEqual(0.03);
    const verdict = budgetVerdict(samples, 0.03);
    expect(verdict.state).toBe("not_enough_labels");
    expect(verdict.overdue).toBeGreaterThan(5);
    expect(verdict.upper).toBeGreaterThan(0.03);
  });
});
