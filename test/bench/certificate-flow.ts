/**
 * The certificate on data shaped as the product collects it (`npm run bench:certificate`, its last
 * table): decisions of a content-moderation-like policy from a model more confident than it is
 * right (true temperature 1.3: 2.9% wrong at 0.9, 1.0% at 0.99), near-duplicates in pairs sharing
 * one label, every escalation labelled, audit samples at band rates, a certification sample of 600
 * drawn above 0.85 of which 5% or 1% are skipped by reviewers (they count as wrong), and a reviewer
 * who errs at a rate drawn per seed between 1% and 3% (a wrong label usually counts as the model's
 * error, and sometimes hides one); beside it, reviewers always right and no draw skipped. The
 * certificate at 2%/95% under the policy's own map; it holds when it certifies nothing or its
 * threshold's true rate, on 40,000 fresh decisions, is at most 2%. Pure arithmetic.
 */

import { clopperPearsonUpper } from "../../shared/domain/calibration/binomial.ts";
import { certifyThreshold } from "../../shared/domain/calibration/certificate.ts";
import { UNLABELLED } from "../../shared/domain/calibration/certificate-units.ts";
import { certifiedItems } from "../../shared/domain/calibration/certified-items.ts";
import { mapOf } from "../../shared/domain/calibration/map.ts";
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

/** How the labels are gathered: the reviewer's error range, and the share of draws skipped. */
interface Labelling {
  readonly name: string;
  readonly reviewerError: readonly [number, number];
  readonly skipped: number;
}

const LABELLINGS: readonly Labelling[] = [
  { name: "reviewers erring 1-3%, 5% of draws skipped", reviewerError: [0.01, 0.03], skipped: 0.05 },
  { name: "reviewers erring 1-3%, 1% of draws skipped", reviewerError: [0.01, 0.03], skipped: 0.01 },
  { name: "reviewers always right, no draw skipped", reviewerError: [0, 0], skipped: 0 },
];

/** The table's lines for `seeds` seeds of each way of labelling. */
export function flowCoverage(seeds: number): string[] {
  return [
    `\nas collected (true temperature 1.3, pairs of near-duplicates, audits, a certification sample of 600 above 0.85), 2% at 95%, ${seeds} seeds per row`,
    "labelling | claim held (95% interval) | certified | wrong when certified",
    ...LABELLINGS.map((l) => rowOf(l, seeds)),
  ];
}

/** One row: how often the claim held, its exact interval, how often one was given and wrong. */
function rowOf(labelling: Labelling, seeds: number): string {
  let [held, certified, wrongCertified] = [0, 0, 0];
  const [low, high] = labelling.reviewerError;
  for (let seed = 1; seed <= seeds; seed++) {
    const random = new SeededRandom(seed * 104_729 + 7);
    const reviewerError = low + (high - low) * random.nextFloat();
    const flips = new Map<string, boolean>();
    const rows = reviewFlow(SHAPE, seed).map((r) => {
      const group = r.group ?? "";
      if (!flips.has(group)) flips.set(group, random.nextFloat() < reviewerError);
      const skipped = r.kind === "certification" && random.nextFloat() < labelling.skipped;
      if (skipped) return { ...r, label: UNLABELLED };
      return flips.get(group) ? { ...r, label: (r.label + 1) % 4 } : r;
    });
    const result = certifyThreshold(certifiedItems(MODERATION, rows, mapOf(MODERATION)), GOAL);
    if (result.threshold === null) {
      held++;
      continue;
    }
    certified++;
    if (trueRate(SHAPE, mapOf(MODERATION), result.threshold)! <= GOAL.maxError) held++;
    else wrongCertified++;
  }
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const [lo, hi] = interval(held, seeds);
  return `${labelling.name} | ${pct(held / seeds)} (${pct(lo)} to ${pct(hi)}) | ${pct(certified / seeds)} | ${certified ? pct(wrongCertified / certified) : "-"}`;
}
