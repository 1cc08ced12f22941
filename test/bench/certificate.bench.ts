/**
 * How often the certificate's claim holds, on generated labelled sets whose true rate of wrong
 * automatic actions is known at every threshold (top probability c = 1 − u³/2, wrong with
 * probability 1 − c: the rate among items at or above λ is (1 − λ)/4), against reading the
 * empirical risk–coverage curve, with P(certified) and P(wrong | certified) that the CLI and the
 * report print beside a certificate (`certificate-bench.ts`, matched on the median automated units a
 * row's certificates rested on); and how often calibration proposes a change on logits that are
 * already calibrated. Prints the figures docs/benchmarks.md quotes.
 *   npm run bench:certificate [-- --seeds 1000]
 */
import { parseArgs } from "node:util";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import {
  CERTIFICATE_GRID,
  certifyThreshold,
} from "../../shared/domain/calibration/certificate/certificate.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { FOUR_OPTIONS_POLICY } from "../helpers/policies.ts";
import { flowCoverage } from "./certificate-flow.ts";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1000" },
    "no-change-seeds": { type: "string", default: "20" },
    "flow-seeds": { type: "string", default: "500" },
  },
});
const seeds = Number(values.seeds);

function items(n: number, seed: number) {
  const random = new SeededRandom(seed);
  return Array.from({ length: n }, () => {
    const c = 1 - random.nextFloat() ** 3 / 2;
    return { confidence: c, wrong: random.nextFloat() < 1 - c, automatable: true };
  });
}
const trueRate = (t: number) => (1 - t) / 4;

console.log(`certificate (95% confidence), ${seeds} seeds per row`);
console.log(
  "target | labels | claim held | certified | wrong when certified | mean coverage | empirical curve: claim held | median units when certified",
);
for (const target of [0.01, 0.02, 0.05]) {
  for (const n of [500, 1500, 5000]) {
    let held = 0;
    let certified = 0;
    let wrongCertified = 0;
    let coverage = 0;
    let empiricalHeld = 0;
    const units: number[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const set = items(n, seed);
      const result = certifyThreshold(set, { maxError: target, confidence: 0.95 });
      if (result.threshold !== null) {
        certified++;
        coverage += result.coverage;
        units.push(result.automated);
      }
      if (result.threshold === null || trueRate(result.threshold) <= target) held++;
      else wrongCertified++;
      const sorted = [...set].sort((a, b) => b.confidence - a.confidence);
      let empirical: number | null = null;
      let k = 0;
      let wrong = 0;
      for (const t of CERTIFICATE_GRID) {
        while (k < sorted.length && sorted[k]!.confidence >= t) wrong += sorted[k++]!.wrong ? 1 : 0;
        if (k > 0 && wrong / k <= target) empirical = t;
      }
      if (empirical === null || trueRate(empirical) <= target) empiricalHeld++;
    }
    const pct = (x: number) => `${((100 * x) / seeds).toFixed(1)}%`;
    console.log(
      `${target} | ${n} | ${pct(held)} | ${pct(certified)} | ${certified ? `${((100 * wrongCertified) / certified).toFixed(1)}%` : "-"} | ${certified ? ((100 * coverage) / certified).toFixed(1) : "-"}% | ${pct(empiricalHeld)} | ${units.length ? units.sort((a, b) => a - b)[units.length >> 1] : "-"}`,
    );
  }
}

const policy = FOUR_OPTIONS_POLICY;
const runs = Number(values["no-change-seeds"]);
console.log(`\nalready calibrated logits (labels drawn from softmax(logits)), ${runs} seeds per row`);
console.log("labels | changes proposed | by candidate");
for (const n of [200, 1000]) {
  const chosen: string[] = [];
  for (let seed = 1; seed <= runs; seed++) {
    const random = new SeededRandom(seed);
    const rows = Array.from({ length: n }, (_, i) => {
      const u = [0, 0, 0, 0].map(() => (random.nextFloat() * 2 - 1) * 3);
      const p = softmax(u);
      let draw = random.nextFloat();
      let label = 0;
      while (label < 3 && draw > p[label]!) draw -= p[label++]!;
      return { logits: u, label, group: `g${i}` };
    });
    const summary = calibratePolicy(policy, rows, {
      goal: { kind: "target-accuracy", accuracy: 0.9 },
      now: new Date(0),
    });
    if (summary.comparison.change) chosen.push(summary.comparison.chosen);
  }
  console.log(`${n} | ${chosen.length} of ${runs} | ${chosen.join(", ") || "-"}`);
}

console.log(flowCoverage(Number(values["flow-seeds"])).join("\n"));
