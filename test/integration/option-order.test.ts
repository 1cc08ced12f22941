/**
 * Option-order debiasing on the generated tiny model, through the real llama.cpp path: the
 * cyclic distribution does not depend on the order the options are declared in, the single
 * pass does, and the answer says how it was computed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { type OptionOrder, SystemOneViolationError } from "../../shared/domain/contracts/system-one/index.ts";
import { decisionRequest } from "../helpers/decision-requests.ts";
import { generatedModel } from "../helpers/models.ts";

const options = [
  { id: "billing", description: "Billing: charges, invoices, refunds" },
  { id: "technical", description: "Technical: errors, crashes, bugs" },
  { id: "account", description: "Account: login, password, profile" },
];
const state = { subject: "Charged twice", body: "My card was charged twice, please refund." };

/** Every ordering of a list. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

let model: DecisionModel;
let scorer: DecisionScorer;

beforeAll(async () => {
  model = await DecisionModel.load({ modelPath: await generatedModel(), threads: 2 });
  scorer = await DecisionScorer.create(model, { contextSize: 2048 });
});

afterAll(async () => {
  await scorer?.dispose();
  await model?.dispose();
});

/** The distribution keyed by option id, for each ordering of the options. */
async function byOrdering(optionOrder: OptionOrder) {
  const out: { order: string; probabilities: Record<string, number>; passes: number; evaluated: number }[] =
    [];
  for (const ordering of permutations(options)) {
    const result = await scorer.score(
      decisionRequest({
        state,
        questions: [
          { key: "team", type: "choice", instructions: "Which team?", options: ordering, optionOrder },
        ],
      }),
    );
    const answer = result.answers[0]!;
    expect(answer.optionIds).toEqual(ordering.map((o) => o.id));
    expect(answer.optionOrder).toBe(optionOrder);
    out.push({
      order: ordering.map((o) => o.id).join(","),
      probabilities: Object.fromEntries(answer.optionIds.map((id, i) => [id, answer.probabilities[i]!])),
      passes: answer.passes,
      evaluated: answer.evaluatedTokens,
    });
  }
  return out;
}

/** Largest difference of any option's probability between two orderings. */
function spread(rows: { probabilities: Record<string, number> }[]): number {
  let widest = 0;
  for (const { id } of options) {
    const values = rows.map((r) => r.probabilities[id]!);
    widest = Math.max(widest, Math.max(...values) - Math.min(...values));
  }
  return widest;
}

describe("cyclic option order", () => {
  it("gives the same distribution for every ordering of the same options, where one pass does not", async () => {
    const single = await byOrdering("declared");
    const cyclic = await byOrdering("cyclic");
    expect(single).toHaveLength(6);
    // One pass reads position as well as content: some ordering moves some option's probability.
    expect(spread(single)).toBeGreaterThan(1e-4);
    expect(spread(cyclic)).toBeLessThan(1e-9);
    for (const row of cyclic) {
      expect(row.passes).toBe(3);
      expect(Object.values(row.probabilities).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    }
    expect(single.every((row) => row.passes === 1)).toBe(true);
  });

  it("re-evaluates only the options and criterion per rotation under the state-first layout", async () => {
    const question = { key: "team", type: "choice", instructions: "Which team?", options } as const;
    await scorer.clearCache();
    const one = (await scorer.score(decisionRequest({ state, questions: [question], layout: "state-first" })))
      .answers[0]!;
    await scorer.clearCache();
    const three = (
      await scorer.score(
        decisionRequest({
          state,
          questions: [{ ...question, optionOrder: "cyclic" }],
          layout: "state-first",
        }),
      )
    ).answers[0]!;
    // The first rotation evaluates the whole prompt; the two others reuse the evidence before the options.
    expect(three.reusedTokens).toBeGreaterThan(0);
    expect(three.evaluatedTokens).toBeLessThan(3 * one.evaluatedTokens);
  });

  it("refuses the cyclic order on a score question, naming the field", async () => {
    const levels = ["low", "medium", "high"].map((description, i) => ({ id: String(i), description }));
    const attempt = () =>
      decisionRequest({
        state,
        questions: [
          { key: "risk", type: "score", instructions: "How risky?", options: levels, optionOrder: "cyclic" },
        ],
      });
    expect(attempt).toThrow(SystemOneViolationError);
    expect(attempt).toThrow(/questions\.risk\.option_order: .*levels are ordered/);
  });
});
