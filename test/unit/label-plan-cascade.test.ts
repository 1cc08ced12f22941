/**
 * The label plan reads a cascade as it runs (issue 40, "the plan knows the policy as it runs"):
 * a certification draw reads each decision's acting model (the record's `topProbability`), so the
 * plan must judge each labelled decision by the model that decides it, not by the first model
 * alone. On the shipped `content-moderation` cascade, judged by the first model only, the labels of
 * items `demo-large` acted on were worth almost nothing to the plan.
 */
import { describe, expect, it } from "vitest";
import type { CascadeRow } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const CASCADE = parsePolicy({
  ...MODERATION,
  id: "moderation-cascade",
  cascade: [{ model: "large", autoThreshold: 0.85 }],
});
const GOAL = { maxError: 0.02, confidence: 0.95 };

/** Unsure (top 0.45 on "allow": the first model passes it on), and sure (0.9996 on "allow"). */
const UNSURE = [1, 0.3, 0, 0];
const SURE = [9, 0, 0, 0];
/** Sure of "restrict": wrong where the label is "allow". */
const SURE_WRONG = [0, 9, 0, 0];

const row = (i: number, logits: number[], secondLogits?: number[]): CascadeRow => ({
  logits,
  label: 0,
  key: `item-${i}`,
  group: `g${i}`,
  kind: "certification",
  inclusionProbability: 1,
  ...(secondLogits ? { secondLogits } : {}),
});

describe("the label plan on a cascade", () => {
  it("counts the decisions the second model acted on, judged by it", () => {
    // 200 passed on by the first model and acted on by the second (right); 20 the first acted on
    // (right), whose second answer, re-scored after the fact, is wrong: the first decides them.
    const rows = [
      ...Array.from({ length: 200 }, (_, i) => row(i, UNSURE, SURE)),
      ...Array.from({ length: 20 }, (_, i) => row(200 + i, SURE, SURE_WRONG)),
    ];
    const plan = planLabels(CASCADE, rows, GOAL);
    expect(plan.held.automatable, "labels of decisions the cascade automates").toBe(220);
    expect(plan.observed).toMatchObject({ units: 220, errors: 0 });
    expect(plan.remaining).toBe(0);
    // The same rows under the policy without its cascade: the first model alone acts on 20.
    const alone = planLabels(parsePolicy({ ...MODERATION, id: "alone" }), rows, GOAL);
    expect(alone.held.automatable).toBe(20);
  });

  it("judges an item the first model passed on without a later answer by the first model's answer", () => {
    // Decided as the batch lane decided before it asked later models: only the first model's answer.
    const rows = Array.from({ length: 30 }, (_, i) => row(i, UNSURE));
    const plan = planLabels(CASCADE, rows, GOAL);
    expect(plan.held.automatable).toBe(0);
    expect(plan.remaining).toBe(149);
  });
});
