/**
 * The allowed-token mass without the full map (issue 44): when the top token over the whole
 * vocabulary is an option letter, the scorer reads the mass as that letter's probability over its
 * share among the letters, and no 151,936-entry map is built. Checked against the full map read at
 * the same position, on the demo model (a letter on top: the short path) and on the generated
 * tiny model (random weights, no letter on top: the full map, as before), and reuse against fresh
 * scoring bit for bit on both paths.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { keptLogitsState } from "../../endpoint/scorer/kept-logits.ts";
import {
  letterReadoutRequest,
  readLetters,
  TOP_TOKEN_READOUT,
} from "../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { PromptSequence } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { decisionRequest, TEAM_QUESTION } from "../helpers/decision-requests.ts";
import { demoModelPath, generatedModel } from "../helpers/models.ts";

const question = TEAM_QUESTION;
const tickets = [
  "My card was charged twice, please refund.",
  "The app crashes when I open settings.",
  "I cannot log in since I changed my password.",
];

/** The two models and whether each puts a letter on top for every ticket. */
const cases = [
  { name: "demo model (a letter on top: the short path)", path: demoModelPath, letterOnTop: true },
  {
    name: "generated tiny model (no letter on top: the full map)",
    path: () => generatedModel(),
    letterOnTop: false,
  },
] as const;

describe.each(cases)("the allowed-token mass on the $name", ({ path, letterOnTop }) => {
  let model: DecisionModel;
  let scorer: DecisionScorer;
  beforeAll(async () => {
    model = await DecisionModel.load({ modelPath: await path(), threads: 2 });
    scorer = await DecisionScorer.create(model, { contextSize: 1024 });
    // The first second readout of the process checks the kept logits against evaluating again
    // (test/integration/kept-logits.test.ts); after it, each decision evaluates its prompt once.
    await scorer.score(decisionRequest({ state: "warm-up", questions: [question] }), { reuse: false });
    expect(keptLogitsState(model.model).state).toBe("trusted");
  });
  afterAll(async () => {
    await scorer?.dispose();
    await model?.dispose();
  });

  /** The top token and the full map at the answer position of `state`'s prompt, read directly. */
  async function direct(state: string) {
    const shown = { instructions: question.instructions, options: question.options! };
    const tokens = scorer.promptTokens(buildDecisionPrompt(state, shown, "state-first", "letters"));
    const letters = scorer.letterTokens.slice(0, shown.options.length);
    return scorer.withSequence(tokens, async (sequence) => {
      await sequence.clear();
      const top = await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
      const full = await sequence.evaluate(tokens, letterReadoutRequest(model.model, letters, true));
      return { top, letters, full: readLetters(full.probabilities, letters, true), tokens };
    });
  }

  it("equals the full map's mass and distribution, and takes the path its top token says", async () => {
    for (const state of tickets) {
      const expected = await direct(state);
      expect(expected.letters.includes(expected.top.token!)).toBe(letterOnTop);
      const evaluations = vi.spyOn(PromptSequence.prototype, "evaluate");
      const secondReadouts = vi.spyOn(PromptSequence.prototype, "readAgain");
      const scored = await scorer.score(decisionRequest({ state, questions: [question] }), { reuse: false });
      // The full map (probabilities with no sampler options) is read only when no letter is on top.
      const fullMaps = [...evaluations.mock.calls, ...secondReadouts.mock.calls].filter(
        ([, readout]) => readout.probabilities && !readout.options,
      );
      evaluations.mockRestore();
      secondReadouts.mockRestore();
      expect(fullMaps.length).toBe(letterOnTop ? 0 : 1);
      const answer = scored.answers[0]!;
      expect(answer.allowedTokenMass).not.toBeNull();
      const mass = expected.full.allowedTokenMass!;
      if (letterOnTop) {
        // The same share but for float rounding: the letters' +100 bias is rounded to float32's
        // step at 128 (about 1.5e-5), so a share, and the mass, may move by that much.
        expect(Math.abs(answer.allowedTokenMass! - mass)).toBeLessThanOrEqual(2e-5 * mass);
      } else {
        expect(answer.allowedTokenMass).toBe(mass);
      }
      // The prompt once: the second readout (letters or the full map) reads the kept logits.
      expect(answer.evaluatedTokens).toBe(expected.tokens.length);
      const fullProbabilities = expected.full.logits.map(Math.exp);
      const total = fullProbabilities.reduce((a, b) => a + b, 0);
      for (const [i, p] of answer.rawProbabilities.entries())
        expect(Math.abs(p - fullProbabilities[i]! / total)).toBeLessThanOrEqual(2e-5);
    }
  });

  it("gives a reused prompt the bits of a fresh one", async () => {
    const request = decisionRequest({ state: tickets[0]!, questions: [question] });
    const fresh = await scorer.score(request, { reuse: false });
    const reused = await scorer.score(request);
    expect(reused.answers[0]!.reusedTokens).toBeGreaterThan(0);
    expect(reused.answers[0]!.allowedTokenMass).toBe(fresh.answers[0]!.allowedTokenMass);
    expect(reused.answers[0]!.logits).toEqual(fresh.answers[0]!.logits);
  });
});
