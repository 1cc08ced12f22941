/**
 * The certificate on data shaped as the product collects it (`npm run bench:certificate`, its last
 * table): decisions of a content-moderation-like policy from a model more confident than it is
 * right (true temperature 1.3: 2.9% wrong at 0.9, 1.0% at 0.99), near-duplicates in pairs sharing
 * one label, every escalation labelled, audit samples at band rates, a certification sample of 600
 * drawn above 0.85 of which 5% or 1% are skipped by reviewers (they count as wrong), and a reviewer
 * who errs at a rate drawn per seed between 1% and 3% (a wrong label usually counts as the model's
 * error, and sometimes hides one); beside it, reviewers always right and no draw skipped. The
 * certificate at 2%/95% under the policy's own map; it holds when it certifies nothing or its
 * threshold's true rate, on 40,000 fresh decisions, is at most 2%. The "registered plan" rows test
 * the certification sample alone as a plan registered at 0.85 (its first, at 96%); in one of them
 * the first plan draws 200 decisions and, where it certifies nothing, a second plan of the rest is
 * tested at 99.5%: the claim over both plans; in another, three plans of 200, 200 and the rest
 * (96%, 99.5%, 99.75%). Pure arithmetic.
 */

import { clopperPearsonUpper } from "../../shared/domain/calibration/certificate/binomial.ts";
import { certifyThreshold } from "../../shared/domain/calibration/certificate/certificate.ts";
import { UNLABELLED } from "../../shared/domain/calibration/certificate/certificate-units.ts";
import { certifiedItems } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { certifyRegistered } from "../../shared/domain/calibration/certificate/registered-certificate.ts";
import { registerPlan } from "../../shared/domain/calibration/certificate/registered-plan.ts";
import { mapOf } from "../../shared/domain/calibration/map.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { type FlowShape, MODERATION, reviewFlow, trueRate } from "../helpers/review-flow.ts";

const SHAPE: FlowShape = {
  decisions: 6_000,
  trueTemperature: 1.3,
  groupSize: 2,
  certification: { above: 0.85, size: 600 },
};
const GOAL = { maxError: 0.02, confidence: 0.95 };

/** The exact two-sided 95% interval of `k` of `n`. */
function interval(k: number, n: number): [number, number] {
  const upper = clopperPearsonUpper(k, n, 0.975);
  const lower = k === 0 ? 0 : 1 - clopperPearsonUpper(n - k, n, 0.975);
  return [lower, upper];
}

/** How the labels are gathered: the reviewers' error range, how many review a draw, and the share skipped. */
export interface Labelling {
  readonly name: string;
  readonly reviewerError: readonly [number, number];
  readonly skipped: number;
  /**
   * 2: every label is given by two reviewers, a disagreement settled by a third (an admin) who
   * errs as they do; wrong reviewers pick the same wrong option (errors fully correlated, the
   * worst case for agreement). @default 1
   */
  readonly reviewers?: 1 | 2;
  /**
   * The registered certificate (`registered-certificate.ts`): the certification sample's drawn
   * items alone, a plan registered at 0.85 and tested at 96% (the version's first plan), instead
   * of learn-then-test on every label held. @default false
   */
  readonly registered?: boolean;
  /**
   * With `registered`: the sizes, in drawn decisions, of the version's plans before its last,
   * which draws the rest of the sample; each draws decisions never drawn before. The first is
   * tested at 96%, and where a plan certifies nothing the lead registers the next at its share of
   * what is left (99.5%, then 99.75%). The claim is over all of them together. The sample's 600
   * drawn pairs of near-duplicates are about 1,200 decisions, a pair counting once.
   * @default none: the whole sample, one plan
   */
  readonly earlierPlans?: readonly number[];
}

const LABELLINGS: readonly Labelling[] = [
  { name: "reviewers erring 1-3%, 5% of draws skipped", reviewerError: [0.01, 0.03], skipped: 0.05 },
  { name: "reviewers erring 1-3%, 1% of draws skipped", reviewerError: [0.01, 0.03], skipped: 0.01 },
  {
    name: "two reviewers erring 1-3% and an admin on disagreement, 1% skipped",
    reviewerError: [0.01, 0.03],
    skipped: 0.01,
    reviewers: 2,
  },
  { name: "reviewers always right, no draw skipped", reviewerError: [0, 0], skipped: 0 },
  {
    name: "registered plan: reviewers erring 1-3%, 5% of draws skipped",
    reviewerError: [0.01, 0.03],
    skipped: 0.05,
    registered: true,
  },
  {
    name: "registered plan: two reviewers erring 1-3% and an admin on disagreement, 1% skipped",
    reviewerError: [0.01, 0.03],
    skipped: 0.01,
    reviewers: 2,
    registered: true,
  },
  {
    name: "registered plan, a second plan of the rest (about 1,000 drawn) where the first of 200 drawn certifies nothing: reviewers always right, no draw skipped",
    reviewerError: [0, 0],
    skipped: 0,
    registered: true,
    earlierPlans: [200],
  },
  {
    name: "registered plan, three plans of 200, 200 and the rest (about 800 drawn), each where the ones before certify nothing: reviewers always right, no draw skipped",
    reviewerError: [0, 0],
    skipped: 0,
    registered: true,
    earlierPlans: [200, 200],
  },
  {
    name: "registered plan: reviewers always right, no draw skipped",
    reviewerError: [0, 0],
    skipped: 0,
    registered: true,
  },
];

/** The certificate a way of labelling gets: learn-then-test on every label, or the registered plan's. */
function certificateOf(labelling: Labelling, rows: readonly LabelledLogits[]): number | null {
  const items = certifiedItems(MODERATION, rows, mapOf(MODERATION));
  if (!labelling.registered) return certifyThreshold(items, GOAL).threshold;
  const drawn = items.filter((i) => i.kind === "certification");
  const above = SHAPE.certification!.above;
  let from = 0;
  const sizes = [...(labelling.earlierPlans ?? []), drawn.length];
  for (const [k, size] of sizes.entries()) {
    // Each plan draws decisions never drawn before and is tested at its round's share of the budget.
    const sample = drawn.slice(from, from + size);
    from += size;
    if (sample.length === 0) break;
    const plan = registerPlan(GOAL, above, sample.length, 1, k + 1);
    const threshold = certifyRegistered(plan, `bench-${k + 1}`, sample).threshold;
    if (threshold !== null) return threshold;
  }
  return null;
}

/** The table's lines for `seeds` seeds of each way of labelling. */
export function flowCoverage(seeds: number): string[] {
  return [
    `\nas collected (true temperature 1.3, pairs of near-duplicates, audits, a certification sample of 600 above 0.85), 2% at 95%, ${seeds} seeds per row`,
    "labelling | claim held (95% interval) | certified | wrong when certified | settled-label error (mean) | true rate <= 2% + settled-label error",
    ...LABELLINGS.map((l) => rowOf(l, seeds)),
  ];
}

/** What `seeds` seeds of one way of labelling gave. */
export interface FlowRun {
  readonly seeds: number;
  /** Seeds where nothing was certified or the threshold's true rate is at most the target. */
  readonly held: number;
  /** Seeds where the true rate is at most the target plus that seed's settled-label error rate. */
  readonly heldWithLabelError: number;
  readonly certified: number;
  /** Mean over seeds of the chance that a settled label is wrong. */
  readonly settledError: number;
}

/** The chance a settled label is wrong: p alone; p² + 2p(1 − p)·p with two and an admin. */
function settledErrorOf(p: number, reviewers: 1 | 2): number {
  return reviewers === 1 ? p : p * p + 2 * p * (1 - p) * p;
}

/** Runs `seeds` seeds of `labelling` on the product-shaped flow. */
export function flowRun(labelling: Labelling, seeds: number): FlowRun {
  let [held, heldWithLabelError, certified, settledError] = [0, 0, 0, 0];
  const [low, high] = labelling.reviewerError;
  const reviewers = labelling.reviewers ?? 1;
  for (let seed = 1; seed <= seeds; seed++) {
    const random = new SeededRandom(seed * 104_729 + 7);
    const p = low + (high - low) * random.nextFloat();
    const q = settledErrorOf(p, reviewers);
    settledError += q / seeds;
    const wrongLabel = new Map<string, boolean>();
    const settledWrong = () => {
      if (reviewers === 1) return random.nextFloat() < p;
      const [a, b] = [random.nextFloat() < p, random.nextFloat() < p];
      return a === b ? a : random.nextFloat() < p;
    };
    const rows = reviewFlow(SHAPE, seed).map((r) => {
      const group = r.group ?? "";
      if (!wrongLabel.has(group)) wrongLabel.set(group, settledWrong());
      const skipped = r.kind === "certification" && random.nextFloat() < labelling.skipped;
      if (skipped) return { ...r, label: UNLABELLED };
      return wrongLabel.get(group) ? { ...r, label: (r.label + 1) % 4 } : r;
    });
    const threshold = certificateOf(labelling, rows);
    if (threshold === null) {
      held++;
      heldWithLabelError++;
      continue;
    }
    certified++;
    const truth = trueRate(SHAPE, mapOf(MODERATION), threshold)!;
    if (truth <= GOAL.maxError) held++;
    if (truth <= GOAL.maxError + q) heldWithLabelError++;
  }
  return { seeds, held, heldWithLabelError, certified, settledError };
}

/** One row: how often the claim held, its exact interval, how often one was given and wrong. */
function rowOf(labelling: Labelling, seeds: number): string {
  const run = flowRun(labelling, seeds);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const [lo, hi] = interval(run.held, seeds);
  const wrong = run.certified - (run.held - (seeds - run.certified));
  return `${labelling.name} | ${pct(run.held / seeds)} (${pct(lo)} to ${pct(hi)}) | ${pct(run.certified / seeds)} | ${run.certified ? pct(wrong / run.certified) : "-"} | ${pct(run.settledError)} | ${pct(run.heldWithLabelError / seeds)}`;
}
