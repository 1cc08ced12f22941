/**
 * The cascade's certificate against ground truth: on generated decisions of two calibrated tiers
 * (the second surer, asked only where the first did not act; `test/helpers/cascade-labels.ts`),
 * labelled as the product labels them, the certified pair's true rate of wrong automatic actions
 * over both tiers is within the target for at least 95% of the seeds where it certifies, and at
 * the same target it sends fewer items to people than the first tier alone certified by the
 * single-tier certificate on the same labels. Assumption: each label's chance of being drawn is
 * known and does not depend on the label (a uniform certification sample; escalations all
 * labelled beside an audit sample of the automated decisions). cascadeItems reads rows of logits
 * under each tier's own map.
 */
import { describe, expect, it } from "vitest";
import {
  CASCADE_GRID,
  type CascadeItem,
  cascadeOrder,
  certifyCascade,
} from "../../shared/domain/calibration/certificate/cascade-certificate.ts";
import { certifyThreshold } from "../../shared/domain/calibration/certificate/certificate.ts";
import { cascadeItems } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { cascadeLabels, cascadeTruth, firstTierItems, type LabelDraw } from "../helpers/cascade-labels.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const truth = cascadeTruth();

/** Four options, legal never automated, none out of scope; a second model after the first. */
const CASCADE_POLICY = cascadeTicketsPolicy({
  autoThreshold: 0.8,
  cascade: [{ model: "large", autoThreshold: 0.7, temperature: 2 }],
});

async function overSeeds(seeds: number, labels: number, maxError: number, draw?: LabelDraw) {
  const goal = { maxError, confidence: 0.95 };
  let [certified, held, people, alonePeople] = [0, 0, 0, 0];
  for (let seed = 1; seed <= seeds; seed++) {
    // Let the test runner's messages through between seeds: the loop is long and synchronous.
    if (seed % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    const items = cascadeLabels(labels, seed, draw);
    const cascade = certifyCascade(items, goal);
    const alone = certifyThreshold(firstTierItems(items), goal);
    people += 1 - cascade.coverage;
    alonePeople += 1 - alone.coverage;
    if (!cascade.thresholds) continue;
    certified++;
    if (truth.at(...cascade.thresholds).rate <= maxError) held++;
  }
  return { certified, held, people: people / seeds, alonePeople: alonePeople / seeds };
}

describe("certifyCascade", () => {
  it("covers the true rate over both tiers in at least 95% of 200 seeds, and sends fewer to people than one tier", async () => {
    const r = await overSeeds(200, 1500, 0.02);
    console.log(
      `2%, 1,500 uniform labels, 200 seeds: certified ${r.certified}, held ${r.held}; people per 1,000: cascade ${Math.round(1000 * r.people)}, first tier alone ${Math.round(1000 * r.alonePeople)}`,
    );
    expect(r.certified).toBeGreaterThanOrEqual(190);
    expect(r.held / r.certified).toBeGreaterThanOrEqual(0.95);
    expect(r.people).toBeLessThan(r.alonePeople);
  }, 180_000);

  it("holds as well with escalations all labelled and automated decisions audited at 25% (weighted)", async () => {
    const r = await overSeeds(200, 3000, 0.05, { kind: "audit", rate: 0.25 });
    console.log(
      `5%, audit draw, 200 seeds: certified ${r.certified}, held ${r.held}; people per 1,000: cascade ${Math.round(1000 * r.people)}, first tier alone ${Math.round(1000 * r.alonePeople)}`,
    );
    expect(r.certified).toBeGreaterThanOrEqual(190);
    expect(r.held / r.certified).toBeGreaterThanOrEqual(0.95);
    expect(r.people).toBeLessThan(r.alonePeople);
  }, 180_000);

  it("never judges a pair whose first threshold passes on an item the second tier was not asked", () => {
    const items = cascadeLabels(1500, 7);
    const unasked = items.filter((i) => !i.second).map((i) => i.first.confidence);
    expect(unasked.length).toBeGreaterThan(0);
    const r = certifyCascade(items, { maxError: 0.01, confidence: 0.95 });
    expect(r.unjudgeable).toBeGreaterThan(0);
    expect(r.thresholds![0]).toBeLessThanOrEqual(Math.min(...unasked));
  });

  it("counts each tier's automated items and the wrong ones by the tier that acted", () => {
    const t = (confidence: number, wrong: boolean) => ({ confidence, wrong, automatable: true });
    // 400 the first tier is sure of (right), 400 it passes on that the second is sure of (right),
    // and 200 neither is sure of, wrong: the strictest pair already automates the 800 right ones,
    // and every pair that automates more takes in wrong answers, so it is the one chosen.
    const items: CascadeItem[] = [
      ...Array.from({ length: 400 }, () => ({ first: t(0.9999, false) })),
      ...Array.from({ length: 400 }, () => ({ first: t(0.6, true), second: t(0.9999, false) })),
      ...Array.from({ length: 200 }, () => ({ first: t(0.3, true), second: t(0.3, true) })),
    ];
    const r = certifyCascade(items, { maxError: 0.01, confidence: 0.95 });
    expect(r.thresholds).toEqual([CASCADE_GRID[0], CASCADE_GRID[0]]);
    expect(r.byTier).toEqual([400, 400]);
    expect(r.errors).toBe(0);
    expect(r.coverage).toBeCloseTo(0.8);
  });

  it("certifies nothing when every automated answer is wrong", () => {
    const wrong = { confidence: 0.999, wrong: true, automatable: true };
    const r = certifyCascade(
      Array.from({ length: 500 }, () => ({ first: wrong, second: wrong })),
      { maxError: 0.02, confidence: 0.95 },
    );
    expect(r.thresholds).toBeNull();
    expect(r.coverage).toBe(0);
  });

  it("walks the grid in shells from the strictest corner, each pair once", () => {
    expect(cascadeOrder(3)).toEqual([
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
      [2, 0],
      [0, 2],
      [2, 1],
      [1, 2],
      [2, 2],
    ]);
    const all = cascadeOrder(CASCADE_GRID.length).map((p) => p.join(","));
    expect(new Set(all).size).toBe(CASCADE_GRID.length ** 2);
  });
});

describe("cascadeItems", () => {
  it("reads each tier's answer under its own map, and no second answer where none was asked", () => {
    const rows = [
      // Billing at 2:0 logits; the second tier, at temperature 2, reads 4:0 as the same 2:0.
      { logits: [2, 0, -9, -9], label: 0, secondLogits: [4, 0, -18, -18], kind: "escalation" as const },
      // The first tier sure of legal (never automated) and wrong; the second sure of technical, right.
      { logits: [0, 0, 9, 0], label: 1, secondLogits: [0, 9, 0, 0], inclusionProbability: 0.25, key: "x" },
      { logits: [9, 0, 0, 0], label: 1 },
    ];
    const items = cascadeItems(CASCADE_POLICY, rows, [{ temperature: 1 }, { temperature: 2 }]);
    expect(items[0]!.first.confidence).toBeCloseTo(items[0]!.second!.confidence, 9);
    expect(items[0]).toMatchObject({ first: { wrong: false, automatable: true }, kind: "escalation" });
    expect(items[1]).toMatchObject({
      first: { wrong: true, automatable: false },
      second: { wrong: false, automatable: true },
      inclusionProbability: 0.25,
      key: "x",
    });
    expect(items[2]).toMatchObject({ first: { wrong: true, automatable: true } });
    expect(items[2]!.second).toBeUndefined();
  });
});
