/**
 * The scorer on the generated tiny model, through the real llama.cpp path.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { PromptTooLongError } from "../../endpoint/runtime/errors.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import {
  type DecisionResult,
  SystemOneViolationError,
} from "../../shared/domain/contracts/system-one/index.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { decisionRequest } from "../helpers/decision-requests.ts";
import { generatedModel } from "../helpers/models.ts";

const teams = [
  { id: "billing", description: "Billing: charges, invoices, refunds" },
  { id: "technical", description: "Technical: errors, crashes, bugs" },
  { id: "account", description: "Account: login, password, profile" },
  { id: "out_of_scope", description: "None of these" },
];
const ticket = {
  subject: "Charged twice",
  body: "My card was charged twice for one subscription, please refund.",
};
const choice = (key = "team", instructions = "Which team should handle this ticket?") =>
  ({ key, type: "choice", instructions, options: teams }) as const;

let model: DecisionModel;
let scorer: DecisionScorer;

beforeAll(async () => {
  model = await DecisionModel.load({ modelPath: await generatedModel(), threads: 2 });
  scorer = await DecisionScorer.create(model, { contextSize: 2048 });
});

afterAll(async () => {
  await scorer.dispose();
  await scorer.dispose(); // safe twice
  await model.dispose();
});

function expectClose(a: readonly number[], b: readonly number[], tolerance: number): void {
  expect(a).toHaveLength(b.length);
  for (const [i, value] of a.entries()) expect(Math.abs(value - b[i]!)).toBeLessThanOrEqual(tolerance);
}

describe("letter scoring", () => {
  it("returns a distribution over the declared options with every required field", async () => {
    const result = await scorer.score(decisionRequest({ state: ticket, questions: [choice()] }));
    const [answer] = result.answers;
    expect(answer!.optionIds).toEqual(["billing", "technical", "account", "out_of_scope"]);
    expect(answer!.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(answer!.probabilities.every((p) => p > 0 && p < 1)).toBe(true);
    const best = answer!.probabilities.indexOf(Math.max(...answer!.probabilities));
    expect(answer!.chosen).toBe(answer!.optionIds[best]);
    expect(answer!.confidence).toBeCloseTo((4 * Math.max(...answer!.probabilities) - 1) / 3, 12);
    expect(answer!.allowedTokenMass).toBeGreaterThan(0);
    expect(answer!.allowedTokenMass).toBeLessThanOrEqual(1);
    expect(answer!.promptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(answer!.promptVersion).toBe("direct-options/state-first@2");
    expect(answer!.inputTokens).toBeGreaterThan(50);
    expect(result.modelSha256).toBe(model.sha256);
    expect(answer!.timings.totalMs).toBeGreaterThan(0);
  });

  it("reads the same letter distribution with and without the full-vocabulary map", async () => {
    const full = await scorer.score(
      decisionRequest({ state: ticket, questions: [choice()], tokenMass: true }),
    );
    const letters = await scorer.score(
      decisionRequest({ state: ticket, questions: [choice()], tokenMass: false }),
    );
    expectClose(full.answers[0]!.probabilities, letters.answers[0]!.probabilities, 1e-6);
    expect(letters.answers[0]!.allowedTokenMass).toBeNull();
  });

  it("applies the temperature as softmax(logits / T) without changing the chosen option", async () => {
    const result = await scorer.score(
      decisionRequest({
        state: ticket,
        questions: [choice("cold"), { ...choice("hot"), temperature: 3 }],
      }),
    );
    const [cold, hot] = result.answers;
    expect(hot!.chosen).toBe(cold!.chosen);
    expectClose(hot!.probabilities, softmax(hot!.logits, 3), 1e-12);
    expectClose(hot!.rawProbabilities, cold!.probabilities, 1e-6);
    expect(Math.max(...hot!.probabilities)).toBeLessThan(Math.max(...cold!.probabilities));
  });

  it("answers score questions with an expected level and noul questions with p(true)", async () => {
    const result = await scorer.score(
      decisionRequest({
        state: ticket,
        questions: [
          {
            key: "urgency",
            type: "score",
            instructions: "How urgent is it?",
            options: ["low", "medium", "high"].map((id) => ({ id, description: id })),
          },
          { key: "refund", type: "noul", instructions: "Does the customer ask for a refund?" },
        ],
      }),
    );
    const [urgency, refund] = result.answers;
    const p = urgency!.probabilities;
    expect(urgency!.score).toBeCloseTo(p[1]! + 2 * p[2]!, 12);
    expect(refund!.optionIds).toEqual(["true", "false"]);
    expect(refund!.noul).toBe(refund!.probabilities[0]);
    expect(refund).not.toHaveProperty("score");
  });

  it("handles sixteen options", async () => {
    const options = Array.from({ length: 16 }, (_, i) => ({
      id: `o${i}`,
      description: `Option number ${i}`,
    }));
    const result = await scorer.score(
      decisionRequest({
        state: "any",
        questions: [{ key: "q", type: "choice", instructions: "Pick", options }],
      }),
    );
    expect(result.answers[0]!.probabilities).toHaveLength(16);
  });
});

describe("reuse", () => {
  const questions = [
    choice("a"),
    choice("b", "Which queue fits best?"),
    { key: "c", type: "noul", instructions: "Is it urgent?" } as const,
  ];

  it("evaluates a shared state once across questions and matches fresh scoring", async () => {
    const reused = await scorer.score(decisionRequest({ state: ticket, questions }));
    const fresh = await scorer.score(decisionRequest({ state: ticket, questions }), { reuse: false });
    expect(reused.answers[1]!.reusedTokens).toBeGreaterThan(reused.answers[1]!.inputTokens / 2);
    expect(reused.usage.evaluatedTokens).toBeLessThan(fresh.usage.evaluatedTokens);
    expect(fresh.answers.every((a) => a.reusedTokens === 0)).toBe(true);
    for (const [i, answer] of reused.answers.entries()) {
      expect(answer.chosen).toBe(fresh.answers[i]!.chosen);
      expectClose(answer.probabilities, fresh.answers[i]!.probabilities, 1e-3);
    }
  });

  it("reuses one policy's preamble across items with the policy-first layout", async () => {
    const items = ["Refund my double charge", "The app crashes on start", "I forgot my password"];
    const reused: DecisionResult[] = [];
    for (const state of items)
      reused.push(
        await scorer.score(decisionRequest({ state, questions: [choice()], layout: "policy-first" })),
      );
    expect(reused[2]!.answers[0]!.promptVersion).toBe("direct-options/policy-first@1");
    expect(reused[2]!.answers[0]!.reusedTokens).toBeGreaterThan(100);
    for (const [i, state] of items.entries()) {
      const fresh = await scorer.score(
        decisionRequest({ state, questions: [choice()], layout: "policy-first" }),
        { reuse: false },
      );
      expect(reused[i]!.answers[0]!.chosen).toBe(fresh.answers[0]!.chosen);
      expectClose(reused[i]!.answers[0]!.probabilities, fresh.answers[0]!.probabilities, 1e-3);
    }
  });
});

describe("full-option likelihood", () => {
  const question = { ...choice(), scoring: "likelihood" } as const;

  it("reuses the prompt across options and equals scoring each option from scratch within 1e-4", async () => {
    const reused = await scorer.score(decisionRequest({ state: ticket, questions: [question] }));
    const fresh = await scorer.score(decisionRequest({ state: ticket, questions: [question] }), {
      reuse: false,
    });
    const a = reused.answers[0]!;
    const b = fresh.answers[0]!;
    expect(a.scoring).toBe("likelihood");
    expect(a.allowedTokenMass).toBeNull();
    expectClose(a.likelihood!.raw, b.likelihood!.raw, 1e-4);
    expectClose(a.likelihood!.normalized, b.likelihood!.normalized, 1e-4);
    expect(a.likelihood!.raw.every((value) => value < 0 && Number.isFinite(value))).toBe(true);
    expectClose(
      a.likelihood!.normalized,
      a.likelihood!.raw.map((value, i) => value / a.likelihood!.tokens[i]!),
      1e-12,
    );
    expect(a.evaluatedTokens).toBeLessThan(b.evaluatedTokens);
    expect(a.chosen).toBe(b.chosen);
  });
});

describe("bad input", () => {
  it("rejects a prompt longer than the context instead of truncating it", async () => {
    const error = await scorer
      .score(decisionRequest({ state: "word ".repeat(3000), questions: [choice()] }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptTooLongError);
    // Named as System One names it: the question's key, with no translation on the way out.
    expect((error as PromptTooLongError).field).toBe("questions.team");
    // What the context holds for a prompt: its 2,048 cells less the one llama.cpp keeps free.
    expect((error as PromptTooLongError).contextSize).toBe(2047);
  });

  // node-llama-cpp keeps one cell of a sequence free: a prompt of exactly contextSize tokens would
  // have its beginning erased (a context shift) before its last token, and be scored on what is left.
  it("refuses a prompt of exactly the context size, and scores one a token shorter", async () => {
    const base = "My card was charged twice for one subscription, please refund. ".repeat(400);
    const size = scorer.contextSize;
    const tokensOf = (state: string) =>
      scorer.promptTokens(
        buildDecisionPrompt(
          state,
          { instructions: choice().instructions, options: teams },
          "state-first",
          "letters",
        ),
      ).length;
    const stateOf = (target: number) => {
      // The shortest prefix of `base` that renders to `target` tokens (the count grows with it).
      let [low, length] = [1, base.length];
      while (low < length) {
        const middle = Math.floor((low + length) / 2);
        if (tokensOf(base.slice(0, middle)) < target) low = middle + 1;
        else length = middle;
      }
      const state = base.slice(0, length);
      expect(tokensOf(state)).toBe(target);
      return state;
    };
    const full = await scorer
      .score(decisionRequest({ state: stateOf(size), questions: [choice()] }))
      .catch((e: unknown) => e);
    expect(full).toBeInstanceOf(PromptTooLongError);
    expect((full as PromptTooLongError).message).toMatch(
      new RegExp(`needs ${size} tokens but the context holds ${size - 1}`),
    );
    const fits = await scorer.score(decisionRequest({ state: stateOf(size - 1), questions: [choice()] }), {
      reuse: false,
    });
    expect(fits.answers[0]!.inputTokens).toBe(size - 1);
  });

  it("takes only validated requests: an invalid one is refused by the contract and never reaches the model", async () => {
    const refused = (() => {
      try {
        return decisionRequest({ state: ticket, questions: [{ ...choice(), options: teams.slice(0, 1) }] });
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(SystemOneViolationError);
    expect((refused as SystemOneViolationError).param).toBe("questions.team.criteria");
    const result = await scorer.score(decisionRequest({ state: ticket, questions: [choice()] }));
    expect(result.answers).toHaveLength(1);
  });

  it("serializes concurrent calls and answers each one", async () => {
    const states = ["one", "two", "three", "four"];
    const results = await Promise.all(
      states.map((state) => scorer.score(decisionRequest({ state, questions: [choice()] }))),
    );
    const solo = await scorer.score(decisionRequest({ state: "three", questions: [choice()] }), {
      reuse: false,
    });
    expectClose(results[2]!.answers[0]!.probabilities, solo.answers[0]!.probabilities, 1e-3);
  });

  it("stops between questions when aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      scorer.score(decisionRequest({ state: ticket, questions: [choice()] }), { signal: controller.signal }),
    ).rejects.toThrow();
  });
});

describe("prefix slots", () => {
  const policies = [
    {
      key: "team",
      type: "choice",
      instructions: "Which team should handle this support ticket?",
      options: teams,
    },
    {
      key: "post",
      type: "choice",
      instructions: "What should happen to this post under the community rules?",
      options: [
        { id: "allow", description: "Allow: the post follows the rules" },
        { id: "restrict", description: "Restrict: limit who sees it" },
        { id: "remove", description: "Remove: the post breaks the rules" },
      ],
    },
    {
      key: "complete",
      type: "noul",
      instructions: "Does the application include income and identity documents?",
    },
  ] as const;
  const items = ["Refund my double charge", "The app crashes on start", "I forgot my password"];
  const interleaved = items.flatMap((state) => policies.map((question) => ({ state, question })));

  async function run(slots: number) {
    const pooled = await DecisionScorer.create(model, { contextSize: 1024, prefixSlots: slots });
    try {
      const results: DecisionResult[] = [];
      for (const { state, question } of interleaved)
        results.push(
          await pooled.score(decisionRequest({ state, questions: [question], layout: "policy-first" })),
        );
      // The same prompt again: all but its last two tokens come from the cache.
      const repeated = await pooled.score(
        decisionRequest({
          state: interleaved.at(-1)!.state,
          questions: [interleaved.at(-1)!.question],
          layout: "policy-first",
        }),
      );
      const fresh: DecisionResult[] = [];
      for (const { state, question } of interleaved)
        fresh.push(
          await pooled.score(decisionRequest({ state, questions: [question], layout: "policy-first" }), {
            reuse: false,
          }),
        );
      return { results, fresh, repeated, stats: pooled.cacheStats };
    } finally {
      await pooled.dispose();
    }
  }

  it("keeps each interleaved policy's preamble in its own slot, with exactly the fresh distributions", async () => {
    const three = await run(3);
    const one = await run(1);
    // After the first round, every item reuses its own policy's preamble on three slots...
    const later = (r: { results: DecisionResult[] }) =>
      r.results.slice(policies.length).map((x) => x.answers[0]!.reusedTokens);
    for (const reused of later(three)) expect(reused).toBeGreaterThan(60);
    // ...while one slot keeps only what the policies share (the chat template and instruction).
    for (const [i, reused] of later(one).entries()) expect(reused).toBeLessThan(later(three)[i]!);
    expect(three.stats).toMatchObject({ slots: 3, hits: 7 });
    expect(one.stats.slots).toBe(1);
    for (const [i, result] of three.results.entries()) {
      expect(result.answers[0]!.probabilities).toEqual(three.fresh[i]!.answers[0]!.probabilities);
      // Each slot is a context of its own: the same bits as a fresh evaluation on another scorer's.
      expect(result.answers[0]!.probabilities).toEqual(one.fresh[i]!.answers[0]!.probabilities);
    }
    // Bit-exact even when only the last two tokens are evaluated (a one-token batch was not).
    expect(three.repeated.answers[0]!.reusedTokens).toBe(three.repeated.answers[0]!.inputTokens - 2);
    expect(three.repeated.answers[0]!.probabilities).toEqual(three.fresh.at(-1)!.answers[0]!.probabilities);
  });
});
