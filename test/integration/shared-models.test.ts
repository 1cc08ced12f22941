/**
 * Extra checks on third-party GGUF files from ../shared/models (a trained TinyStories model and
 * a random model with the real Llama 2 tokenizer). Skipped, with a message, where absent.
 */
import { describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { decisionRequest } from "../helpers/decision-requests.ts";
import { sharedModel } from "../helpers/models.ts";

const question = {
  key: "cat",
  type: "choice",
  instructions: "Who sat on the mat?",
  options: [
    { id: "cat", description: "A cat" },
    { id: "dog", description: "A dog" },
    { id: "nobody", description: "Nobody" },
  ],
} as const;

for (const file of ["stories260K.gguf", "llama-2-tiny-random.gguf"]) {
  const path = sharedModel(file);
  describe.skipIf(!path)(`third-party model ${file}`, () => {
    it("passes the slot checks in context and scores with reuse equal to fresh scoring", async () => {
      await using model = await DecisionModel.load({ modelPath: path!, threads: 2 });
      await using scorer = await DecisionScorer.create(model, { contextSize: 1024 });
      const request = {
        state: "Once upon a time a cat sat on the mat.",
        questions: [question, { ...question, key: "again" }],
      };
      const reused = await scorer.score(decisionRequest(request));
      const fresh = await scorer.score(decisionRequest(request), { reuse: false });
      const [first, second] = reused.answers;
      expect(first!.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      expect(first!.allowedTokenMass).toBeGreaterThan(0);
      expect(second!.reusedTokens).toBeGreaterThan(0);
      for (const [i, answer] of reused.answers.entries()) {
        expect(answer.chosen).toBe(fresh.answers[i]!.chosen);
        for (const [j, p] of answer.probabilities.entries()) {
          expect(Math.abs(p - fresh.answers[i]!.probabilities[j]!)).toBeLessThan(1e-3);
        }
      }
    });
  });
}
