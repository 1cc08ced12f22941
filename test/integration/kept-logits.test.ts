/**
 * A second readout at the answer position from the logits llama.cpp kept, with no evaluation
 * (`endpoint/scorer/kept-logits.ts`): trusted only after it agreed once with evaluating again, the
 * same bits either way, never read after the cache changed, and turned off (evaluating again, as
 * before) when it differs or fails. The two faults are injected around the real readout; every
 * other readout here is llama.cpp's own, on the demo model (a letter on top) and the tiny model.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { keptLogitsState, resetKeptLogits, settleKeptLogits } from "../../endpoint/scorer/kept-logits.ts";
import { letterReadoutRequest, TOP_TOKEN_READOUT } from "../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import type { NextTokenReadout, PromptEvaluation } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { decisionRequest, TEAM_QUESTION } from "../helpers/decision-requests.ts";
import { demoModelPath, generatedModel } from "../helpers/models.ts";

/** Faults to inject around the real readout of kept logits. */
const fault = vi.hoisted(() => ({ kind: "none" as "none" | "differ" | "fail" }));

vi.mock("../../endpoint/scorer/kept-logits.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../endpoint/scorer/kept-logits.ts")>();
  return {
    ...actual,
    readKeptLogits: async (...args: Parameters<typeof actual.readKeptLogits>) => {
      if (fault.kind === "fail") throw new Error("injected: no such member");
      const read = await actual.readKeptLogits(...args);
      if (fault.kind !== "differ" || !read.probabilities) return read;
      // One probability off by one part in a million: what a wrong row or a changed sampler gives.
      const [token, p] = [...read.probabilities][0]!;
      return { ...read, probabilities: new Map([...read.probabilities, [token, p * (1 + 1e-6)]]) };
    },
  };
});

const question = TEAM_QUESTION;
const shown = { instructions: question.instructions, options: question.options! };
const tickets = ["My card was charged twice, please refund.", "The app crashes when I open settings."];

describe.each([
  { name: "demo model", path: demoModelPath },
  { name: "generated tiny model", path: () => generatedModel() },
])("second readouts on the $name", ({ path }) => {
  let model: DecisionModel;
  let scorer: DecisionScorer;
  beforeAll(async () => {
    model = await DecisionModel.load({ modelPath: await path(), threads: 2 });
    scorer = await DecisionScorer.create(model, { contextSize: 1024 });
  });
  afterAll(async () => {
    await scorer?.dispose();
    await model?.dispose();
  });
  beforeEach(() => {
    fault.kind = "none";
    resetKeptLogits();
  });

  const promptOf = (state: string) =>
    scorer.promptTokens(buildDecisionPrompt(state, shown, "state-first", "letters"));
  const readouts = (): [string, NextTokenReadout][] => {
    const letters = scorer.letterTokens.slice(0, shown.options.length);
    return [
      ["the top token", TOP_TOKEN_READOUT],
      ["the letters", letterReadoutRequest(model.model, letters, false)],
      ["the full map", letterReadoutRequest(model.model, letters, true)],
    ];
  };
  const same = (a: PromptEvaluation, b: PromptEvaluation) => {
    expect(a.token).toBe(b.token);
    expect(a.confidence).toBe(b.confidence);
    expect([...a.probabilities]).toEqual([...b.probabilities]);
  };

  it("reads what evaluating again reads, bit for bit, for each readout, once trusted", async () => {
    const tokens = promptOf(tickets[0]!);
    for (const [, readout] of readouts()) {
      await scorer.withSequence(tokens, async (sequence) => {
        await sequence.clear();
        await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
        const kept = await sequence.readAgain(tokens, readout);
        expect(keptLogitsState().state).toBe("trusted");
        const again = await sequence.evaluate(tokens, readout);
        expect(again.evaluatedTokens).toBe(2);
        same(kept, again);
        // Trusted now: the same readout comes from the kept logits, nothing evaluated.
        const trusted = await sequence.readAgain(tokens, readout);
        expect(trusted.evaluatedTokens).toBe(0);
        same(trusted, again);
      });
      resetKeptLogits();
    }
  });

  it("never reads kept logits of another prompt: after the cache changed it evaluates again", async () => {
    const [a, b] = [promptOf(tickets[0]!), promptOf(tickets[1]!)];
    settleKeptLogits(true);
    const [, letters] = readouts()[1]!;
    await scorer.withSequence(a, async (sequence) => {
      await sequence.clear();
      const fresh = await sequence.evaluate(a, letters);
      await sequence.evaluate(b, TOP_TOKEN_READOUT);
      const read = await sequence.readAgain(a, letters);
      expect(read.evaluatedTokens).toBeGreaterThan(2);
      same(read, fresh);
      await sequence.clear();
      await sequence.evaluate(a, TOP_TOKEN_READOUT);
      await sequence.truncate(a.length - 1);
      expect((await sequence.readAgain(a, letters)).evaluatedTokens).toBeGreaterThan(0);
    });
  });

  it("checks on the first decision, then scores every later one with its prompt evaluated once, same bits", async () => {
    const request = decisionRequest({ state: tickets[0]!, questions: [question] });
    const checked = (await scorer.score(request, { reuse: false })).answers[0]!;
    expect(keptLogitsState().state).toBe("trusted");
    const trusted = (await scorer.score(request, { reuse: false })).answers[0]!;
    expect(trusted.evaluatedTokens).toBe(trusted.inputTokens);
    expect(checked.evaluatedTokens).toBeGreaterThan(trusted.evaluatedTokens);
    expect(trusted.logits).toEqual(checked.logits);
    expect(trusted.allowedTokenMass).toBe(checked.allowedTokenMass);
  });

  it.each(["differ", "fail"] as const)(
    "turns itself off when a kept readout would %s, says why, and evaluates again with the same bits",
    async (kind) => {
      const request = decisionRequest({ state: tickets[1]!, questions: [question] });
      settleKeptLogits(true);
      const reference = (await scorer.score(request, { reuse: false })).answers[0]!;
      resetKeptLogits();
      fault.kind = kind;
      const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
      const first = (await scorer.score(request, { reuse: false })).answers[0]!;
      const later = (await scorer.score(request, { reuse: false })).answers[0]!;
      const state = keptLogitsState();
      expect(state.state).toBe("off");
      expect(state.state === "off" && state.reason).toMatch(
        kind === "differ" ? /differed/ : /failed: injected/,
      );
      expect(warnings).toHaveBeenCalledTimes(1);
      warnings.mockRestore();
      for (const answer of [first, later]) {
        expect(answer.evaluatedTokens).toBeGreaterThan(answer.inputTokens);
        expect(answer.logits).toEqual(reference.logits);
        expect(answer.allowedTokenMass).toBe(reference.allowedTokenMass);
      }
    },
  );
});
