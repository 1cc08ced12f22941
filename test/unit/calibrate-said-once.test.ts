/**
 * No repeated sentence (issue 33, item 8): `decide calibrate --propose` with a certificate said
 * the threshold's share twice, on the proposal's line ("autoThreshold 0.5831 (33.0% automated)")
 * and in the certificate's sentence right below ("auto threshold 0.5831: ... coverage 33.0%");
 * without one, "autoThreshold 1 (0.0% automated)" stood above "no certificate: applying this
 * sends every item to people". The certificate's sentence now says it alone; a proposal without
 * a certificate keeps the share on its line.
 */
import { describe, expect, it } from "vitest";
import { printProposals } from "../../cli/calibrate/calibrate-propose.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import type { ThresholdGoal } from "../../shared/domain/calibration/threshold.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { FOUR_OPTIONS_POLICY } from "../helpers/policies.ts";

function rows(n: number) {
  const random = new SeededRandom(1);
  return Array.from({ length: n }, (_, i) => {
    const u = [0, 0, 0, 0].map(() => (random.nextFloat() * 2 - 1) * 6);
    const p = softmax(u);
    let draw = random.nextFloat();
    let label = 0;
    while (label < 3 && draw > p[label]!) draw -= p[label++]!;
    return { logits: u, label, group: `g${i}` };
  });
}

function printed(n: number, goal: ThresholdGoal): readonly string[] {
  const summary = calibratePolicy(FOUR_OPTIONS_POLICY, rows(n), { goal, now: new Date(0) });
  const keys = { policy: "v2/policy.json", report: "v2/report.html", summary: "v2/summary.json" };
  const outcome = {
    policyId: "p",
    version: 1,
    status: "proposed" as const,
    labels: n,
    proposedVersion: 2,
    keys,
    summary,
  };
  const options = {
    table: "t",
    policiesDir: "p",
    policyId: undefined,
    out: "out",
    minLabels: 10,
    goal,
    eventBus: undefined,
    aws: {},
  };
  return printProposals([outcome], options).lines;
}

const certify = (maxError: number): ThresholdGoal => ({ kind: "max-auto-error", maxError, confidence: 0.95 });

describe("decide calibrate --propose says each figure once", () => {
  it("with a certificate: the share automated only in the certificate's sentence", () => {
    const lines = printed(1000, certify(0.05));
    const share = /coverage (\d+\.\d%)/.exec(lines.join("\n"))?.[1];
    expect(share).toBeDefined();
    expect(lines.join("\n").split(share!)).toHaveLength(2);
    expect(lines[0]).toMatch(/autoThreshold 0\.\d+$/);
  });

  it("without one reached: 'sends every item to people' once, not beside '0.0% automated'", () => {
    const lines = printed(1000, certify(0.001)).join("\n");
    expect(lines).toContain("no certificate: applying this sends every item to people");
    expect(lines).not.toContain("0.0% automated");
  });

  it("without a certificate asked for: the share stays on the proposal's line", () => {
    const lines = printed(1000, { kind: "target-accuracy", accuracy: 0.9 });
    expect(lines[0]).toMatch(/autoThreshold [\d.]+ \(\d+\.\d% automated\)$/);
  });
});
