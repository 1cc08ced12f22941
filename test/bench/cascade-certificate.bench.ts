/**
 * The cascade's certificate against the first tier's alone, on generated decisions of two
 * calibrated tiers whose true error rates are known (`test/helpers/cascade-labels.ts`): how often
 * the claim "wrong automatic actions over both tiers ≤ target with 95% confidence" holds, how
 * often a pair is certified (and the claim among the certified seeds), and people per 1,000 decisions for one tier (certifyThreshold) and
 * for the cascade (certifyCascade) on the same labels. Prints the table docs/benchmarks.md quotes.
 *   npm run bench:cascade-certificate [-- --seeds 200 --labels 1500 --draw uniform|audit]
 */
import { parseArgs } from "node:util";
import { certifyCascade } from "../../shared/domain/calibration/certificate/cascade-certificate.ts";
import { certifyThreshold } from "../../shared/domain/calibration/certificate/certificate.ts";
import { cascadeLabels, cascadeTruth, firstTierItems, type LabelDraw } from "../helpers/cascade-labels.ts";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "200" },
    labels: { type: "string", default: "1500" },
    draw: { type: "string", default: "uniform" },
  },
});
const seeds = Number(values.seeds);
const labels = Number(values.labels);
const draw: LabelDraw = values.draw === "audit" ? { kind: "audit", rate: 0.25 } : { kind: "uniform" };
const truth = cascadeTruth();

/** Claim held (over all seeds), certified, people per 1,000 (mean over all seeds) for one tier and two. */
function row(maxError: number) {
  const goal = { maxError, confidence: 0.95 };
  const one = { held: 0, certified: 0, people: 0 };
  const two = { held: 0, certified: 0, people: 0 };
  for (let seed = 1; seed <= seeds; seed++) {
    const items = cascadeLabels(labels, seed, draw);
    const alone = certifyThreshold(firstTierItems(items), goal);
    const cascade = certifyCascade(items, goal);
    one.people += 1 - alone.coverage;
    two.people += 1 - cascade.coverage;
    if (alone.threshold !== null) one.certified++;
    if (cascade.thresholds) two.certified++;
    if (alone.threshold === null || truth.at(alone.threshold, 2).rate <= maxError) one.held++;
    if (!cascade.thresholds || truth.at(...cascade.thresholds).rate <= maxError) two.held++;
  }
  return { one, two };
}

const pct = (x: number) => `${((100 * x) / seeds).toFixed(1)}%`;
// P(claim held | certified): the share of certified seeds whose pair's true rate is within the target.
const whenCertified = (r: { held: number; certified: number }) =>
  r.certified ? `${(100 - (100 * (seeds - r.held)) / r.certified).toFixed(1)}%` : "-";
const per1000 = (x: number) => Math.round((1000 * x) / seeds);
console.log(
  `cascade certificate (95% confidence), ${seeds} seeds, ${labels.toLocaleString("en-US")} decisions per seed, labels drawn ${draw.kind === "uniform" ? "uniformly" : "as escalations all and automated decisions at 25%"}`,
);
console.log(
  "target | one tier: claim held | certified | held when certified | people per 1,000 | cascade: claim held | certified | held when certified | people per 1,000",
);
for (const target of [0.01, 0.02, 0.05]) {
  const { one, two } = row(target);
  console.log(
    `${target * 100}% | ${pct(one.held)} | ${pct(one.certified)} | ${whenCertified(one)} | ${per1000(one.people)} | ${pct(two.held)} | ${pct(two.certified)} | ${whenCertified(two)} | ${per1000(two.people)}`,
  );
}
