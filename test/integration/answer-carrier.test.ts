/**
 * Generated models that answer with chosen pieces (`endpoint/models/answer-carrier.ts`): the
 * benchmarks' models put "A" or "B" on top so that the allowed-token mass takes the path a real
 * model's answers take. Checked through llama.cpp on a small tied model in both quantized types,
 * against the same model without the carrier (same seed), whose random top token is no letter.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerCarrierEditor } from "../../endpoint/models/answer-carrier.ts";
import { MODEL_SHAPES, type ModelShape } from "../../endpoint/models/shapes.ts";
import { synthesizeModel } from "../../endpoint/models/synthesize.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import {
  letterReadoutRequest,
  readLetters,
  TOP_TOKEN_READOUT,
} from "../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { TEAM_QUESTION } from "../helpers/decision-requests.ts";

/** The tiny shape made like Qwen2's: tied embeddings and its weight scale. */
const tiedShape: ModelShape = {
  ...MODEL_SHAPES.tiny,
  tiedEmbeddings: true,
  weightStd: 0.02,
  embeddingStd: 0.02,
};

const tickets = [
  "My card was charged twice, please refund.",
  "The app crashes when I open settings.",
  "I cannot log in since I changed my password.",
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "answer-carrier-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Top token (as an index among the question's letters, -1 for none) and mass, per ticket. */
async function readouts(path: string) {
  const model = await DecisionModel.load({ modelPath: path, threads: 2 });
  const scorer = await DecisionScorer.create(model, { contextSize: 1024 });
  try {
    const letters = scorer.letterTokens.slice(0, TEAM_QUESTION.options!.length);
    const out: { top: number; mass: number }[] = [];
    for (const ticket of tickets) {
      const prompt = buildDecisionPrompt(
        ticket,
        { instructions: TEAM_QUESTION.instructions, options: TEAM_QUESTION.options! },
        "state-first",
        "letters",
      );
      const tokens = scorer.promptTokens(prompt);
      out.push(
        await scorer.withSequence(tokens, async (sequence) => {
          const top = await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
          const full = await sequence.evaluate(tokens, letterReadoutRequest(model.model, letters, true));
          const mass = readLetters(full.probabilities, letters, true).allowedTokenMass!;
          return { top: letters.indexOf(top.token!), mass };
        }),
      );
    }
    return out;
  } finally {
    await scorer.dispose();
    await model.dispose();
  }
}

describe.each(["Q8_0", "Q4_0"] as const)("a generated %s model with answer pieces A and B", (weightType) => {
  // How much of the probability A and B hold depends on the shape (about 0.99 on the Qwen2-0.5B
  // shape the constants are tuned on); on any shape they are on top and hold far more than before.
  it("puts A or B on top, where the same random model does not", async () => {
    const plain = join(dir, `plain-${weightType}.gguf`);
    const answering = join(dir, `answering-${weightType}.gguf`);
    await synthesizeModel(tiedShape, { out: plain, weightType, seed: 3 });
    await synthesizeModel(tiedShape, { out: answering, weightType, seed: 3, answerPieces: ["A", "B"] });

    const before = await readouts(plain);
    expect(before.every(({ top }) => top < 0)).toBe(true);
    const after = await readouts(answering);
    after.forEach(({ top, mass }, i) => {
      expect([0, 1]).toContain(top);
      expect(mass).toBeGreaterThan(10 * before[i]!.mass);
    });
  });
});

describe("answer pieces are refused where they cannot work", () => {
  it("needs a quantized embedding, tied embeddings and pieces of the vocabulary", async () => {
    expect(() => answerCarrierEditor("F32", 64, new Set([1]))).toThrow(/quantized token embedding/);
    await expect(
      synthesizeModel(MODEL_SHAPES.tiny, { out: join(dir, "untied.gguf"), answerPieces: ["A"] }),
    ).rejects.toThrow(/tied embeddings/);
    await expect(
      synthesizeModel(tiedShape, { out: join(dir, "unknown.gguf"), weightType: "Q8_0", answerPieces: ["¤"] }),
    ).rejects.toThrow(/not in the vocabulary/);
  });
});
