/**
 * The prefill floors the readout benchmark compares a decision with (PromptSequence.prefill), on
 * the generated tiny model: they cache the prompt like a decision does, and a decision that reuses
 * a prefix evaluated with no output row still equals a fresh evaluation bit for bit.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { type DecisionInput, decisionRequest } from "../helpers/decision-requests.ts";
import { demoModelPath, generatedModel } from "../helpers/models.ts";

const question = {
  key: "team",
  type: "choice",
  instructions: "Which team should handle this ticket?",
  options: [
    { id: "billing", description: "Billing: charges, invoices, refunds" },
    { id: "technical", description: "Technical: errors, crashes, bugs" },
    { id: "account", description: "Account: login, password, profile" },
  ],
} as const;
const input: DecisionInput = { state: "My card was charged twice, please refund.", questions: [question] };

let model: DecisionModel;
let scorer: DecisionScorer;

beforeAll(async () => {
  model = await DecisionModel.load({ modelPath: await generatedModel(), threads: 2 });
  scorer = await DecisionScorer.create(model, { contextSize: 1024 });
});

afterAll(async () => {
  await scorer.dispose();
  await model.dispose();
});

const promptTokens = () =>
  scorer.promptTokens(buildDecisionPrompt(input.state, question, "state-first", "letters"));

describe("PromptSequence.prefill", () => {
  it("caches exactly the prompt, with or without an output row", async () => {
    const tokens = promptTokens();
    for (const outputRow of [false, true]) {
      const held = await scorer.withSequence(tokens, async (sequence) => {
        await sequence.prefill(tokens, outputRow);
        return [...sequence.tokens];
      });
      expect(held).toEqual(tokens);
    }
  });

  it("leaves a decision reusing that prefix bit-identical to a fresh one", async () => {
    const fresh = await scorer.score(decisionRequest(input), { reuse: false });
    const tokens = promptTokens();
    for (const outputRow of [false, true]) {
      await scorer.withSequence(tokens, (sequence) => sequence.prefill(tokens, outputRow));
      const reused = await scorer.score(decisionRequest(input));
      expect(reused.answers[0]!.reusedTokens).toBe(tokens.length - 2);
      expect(reused.answers[0]!.logits).toEqual(fresh.answers[0]!.logits);
      expect(reused.answers[0]!.probabilities).toEqual(fresh.answers[0]!.probabilities);
      expect(reused.answers[0]!.allowedTokenMass).toEqual(fresh.answers[0]!.allowedTokenMass);
    }
  });
});

describe.each([
  { name: "the tiny model (no letter on top: the mass from the full map)", path: () => generatedModel() },
  { name: "the demo model (a letter on top: the mass from the top token)", path: demoModelPath },
])("a prompt one token past the batch size, on $name", ({ path }) => {
  let own: DecisionModel;
  let ownScorer: DecisionScorer;
  beforeAll(async () => {
    own = await DecisionModel.load({ modelPath: await path(), threads: 2 });
    ownScorer = await DecisionScorer.create(own, { contextSize: 1024 });
  });
  afterAll(async () => {
    await ownScorer?.dispose();
    await own?.dispose();
  });

  // llama.cpp decodes a batch of one token with another kernel whose last bits differ; a fresh
  // prompt of 512k + 1 tokens would end on such a batch, where its reuse evaluates two.
  it("gets the same bits fresh and reused, with and without the mass", async () => {
    const batch = 512;
    const base = "My card was charged twice for the same order, please refund the second charge. ".repeat(40);
    const tokensOf = (state: string) =>
      ownScorer.promptTokens(buildDecisionPrompt(state, question, "state-first", "letters")).length;
    let length = 1;
    while (tokensOf(base.slice(0, length)) % batch !== 1 || tokensOf(base.slice(0, length)) < batch) length++;
    const state = base.slice(0, length);
    expect(tokensOf(state)).toBe(batch + 1);
    for (const tokenMass of [false, true]) {
      const request = decisionRequest({ ...input, state, tokenMass });
      const fresh = await ownScorer.score(request, { reuse: false });
      const reused = await ownScorer.score(request);
      expect(reused.answers[0]!.reusedTokens).toBe(batch - 1);
      expect(reused.answers[0]!.logits).toEqual(fresh.answers[0]!.logits);
      expect(reused.answers[0]!.allowedTokenMass).toEqual(fresh.answers[0]!.allowedTokenMass);
    }
  });
});
