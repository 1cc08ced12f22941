/**
 * A second readout at the answer position from the logits llama.cpp kept, with no evaluation
 * (`endpoint/scorer/kept-logits.ts`): trusted per model only after it agreed once with the
 * evaluation that kept them, equal bit for bit to evaluating the last tokens again, never read
 * after the cache changed, and turned off for that model (evaluating again, as before, with a
 * warning) when it differs, fails or comes back without what was asked, at any time. The faults
 * are injected around the real readout; every other readout here is llama.cpp's own, on the demo
 * model (a letter on top) and the generated tiny model (none).
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

/** Faults to inject around the real readout of kept logits, for one model or any. */
const fault = vi.hoisted(() => ({
  kind: "none" as "none" | "differ" | "fail" | "empty",
  onlyFor: undefined as unknown,
}));

vi.mock("../../endpoint/scorer/kept-logits.ts", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../endpoint/scorer/kept-logits.ts")>();
  return {
    ...actual,
    readKeptLogits: async (...args: Parameters<typeof actual.readKeptLogits>) => {
      const read = await actual.readKeptLogits(...args);
      if (fault.onlyFor !== undefined && args[0].model !== fault.onlyFor) return read;
      if (fault.kind === "fail") throw new Error("injected: no such member");
      if (fault.kind === "empty") return { token: read.token };
      if (fault.kind !== "differ" || !read.probabilities) return read;
      // One probability off by one part in a million: what a wrong row or a changed sampler gives.
      const [token, p] = [...read.probabilities][0]!;
      return { ...read, probabilities: new Map([...read.probabilities, [token, p * (1 + 1e-6)]]) };
    },
  };
});

const question = TEAM_QUESTION;
const shown = { instructions: question.instructions, options: question.options! };
// Two states of the same length in tokens: a stale readout could not be told apart by length.
const tickets = ["Order 17 was charged twice, please refund.", "Order 42 was charged twice, please refund."];

interface Loaded {
  readonly name: string;
  model: DecisionModel;
  scorer: DecisionScorer;
}
const loaded: Loaded[] = [
  { name: "demo model", model: undefined!, scorer: undefined! },
  { name: "generated tiny model", model: undefined!, scorer: undefined! },
];

beforeAll(async () => {
  for (const [i, path] of [await demoModelPath(), await generatedModel()].entries()) {
    loaded[i]!.model = await DecisionModel.load({ modelPath: path, threads: 2 });
    loaded[i]!.scorer = await DecisionScorer.create(loaded[i]!.model, { contextSize: 1024 });
  }
});
afterAll(async () => {
  for (const { scorer, model } of loaded) {
    await scorer?.dispose();
    await model?.dispose();
  }
});
beforeEach(() => {
  fault.kind = "none";
  fault.onlyFor = undefined;
  resetKeptLogits();
});

const stateOf = (l: Loaded) => keptLogitsState(l.model.model);
const promptOf = (l: Loaded, state: string) =>
  l.scorer.promptTokens(buildDecisionPrompt(state, shown, "state-first", "letters"));
const readoutsOf = (l: Loaded): [string, NextTokenReadout][] => {
  const letters = l.scorer.letterTokens.slice(0, shown.options.length);
  return [
    ["the top token", TOP_TOKEN_READOUT],
    ["the letters", letterReadoutRequest(l.model.model, letters, false)],
    ["the full map", letterReadoutRequest(l.model.model, letters, true)],
  ];
};
const same = (a: PromptEvaluation, b: PromptEvaluation) => {
  expect(a.token).toBe(b.token);
  expect(a.confidence).toBe(b.confidence);
  expect([...a.probabilities]).toEqual([...b.probabilities]);
};
const score = (l: Loaded, state: string) =>
  l.scorer
    .score(decisionRequest({ state, questions: [question] }), { reuse: false })
    .then((r) => r.answers[0]!);

describe.each(loaded)("second readouts on the $name", (l) => {
  it("read from the whole prompt's batch what evaluating its last two tokens again reads, bit for bit", async () => {
    const tokens = promptOf(l, tickets[0]!);
    for (const [, readout] of readoutsOf(l)) {
      await l.scorer.withSequence(tokens, async (sequence) => {
        await sequence.clear();
        await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
        // Unchecked: the check evaluates again and compares; the model is trusted after it.
        const checked = await sequence.readAgain(tokens, readout);
        expect(checked.evaluatedTokens).toBe(2);
        expect(stateOf(l).state).toBe("trusted");
        // Trusted: the readout of the whole prompt's batch (nothing evaluated) against the last
        // two tokens evaluated again.
        await sequence.clear();
        await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
        const kept = await sequence.readAgain(tokens, readout);
        expect(kept.evaluatedTokens).toBe(0);
        same(kept, await sequence.evaluate(tokens, readout));
      });
      resetKeptLogits();
    }
  });

  it("never reads kept logits of another prompt: after the cache changed it evaluates again", async () => {
    const [a, b] = [promptOf(l, tickets[0]!), promptOf(l, tickets[1]!)];
    expect(a.length).toBe(b.length);
    settleKeptLogits(l.model.model, true);
    const [, letters] = readoutsOf(l)[1]!;
    await l.scorer.withSequence(a, async (sequence) => {
      await sequence.clear();
      const fresh = await sequence.evaluate(a, letters);
      await sequence.evaluate(b, TOP_TOKEN_READOUT);
      const read = await sequence.readAgain(a, letters);
      expect(read.evaluatedTokens).toBeGreaterThan(0);
      same(read, fresh);
      await sequence.clear();
      await sequence.evaluate(a, TOP_TOKEN_READOUT);
      await sequence.truncate(a.length - 1);
      expect((await sequence.readAgain(a, letters)).evaluatedTokens).toBeGreaterThan(0);
    });
  });

  it("checks on the first decision, then scores every later one with its prompt evaluated once, same bits", async () => {
    const checked = await score(l, tickets[0]!);
    expect(stateOf(l).state).toBe("trusted");
    const trusted = await score(l, tickets[0]!);
    expect(trusted.evaluatedTokens).toBe(trusted.inputTokens);
    expect(checked.evaluatedTokens).toBeGreaterThan(trusted.evaluatedTokens);
    expect(trusted.logits).toEqual(checked.logits);
    expect(trusted.allowedTokenMass).toBe(checked.allowedTokenMass);
  });

  it.each([
    ["differs on its check", "differ", false, /differed/],
    ["fails on its check", "fail", false, /failed: injected/],
    ["fails once trusted", "fail", true, /failed: injected/],
    [
      "comes back without what was asked once trusted",
      "empty",
      true,
      /no (probabilities|confidence) came back/,
    ],
  ] as const)(
    "turns itself off when a kept readout %s, says why once, and evaluates again with the same bits",
    async (_, kind, trustedFirst, reason) => {
      settleKeptLogits(l.model.model, true);
      const reference = await score(l, tickets[1]!);
      if (!trustedFirst) resetKeptLogits();
      fault.kind = kind;
      const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
      const answers = [await score(l, tickets[1]!), await score(l, tickets[1]!)];
      const state = stateOf(l);
      expect(warnings).toHaveBeenCalledTimes(1);
      warnings.mockRestore();
      expect(state.state).toBe("off");
      expect(state.state === "off" && state.reason).toMatch(reason);
      for (const answer of answers) {
        expect(answer.evaluatedTokens).toBeGreaterThan(answer.inputTokens);
        expect(answer.logits).toEqual(reference.logits);
        expect(answer.allowedTokenMass).toBe(reference.allowedTokenMass);
      }
    },
  );
});

describe("trust per model", () => {
  it("checks each model on its own: one model's failed check turns off that model only, even after another was trusted", async () => {
    const [demo, tiny] = loaded as [Loaded, Loaded];
    await score(demo, tickets[0]!);
    expect(stateOf(demo).state).toBe("trusted");
    expect(stateOf(tiny).state).toBe("unchecked");
    fault.kind = "differ";
    fault.onlyFor = tiny.model.model;
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
    const first = await score(tiny, tickets[0]!);
    expect(warnings).toHaveBeenCalledTimes(1);
    warnings.mockRestore();
    expect(stateOf(tiny).state).toBe("off");
    expect(stateOf(demo).state).toBe("trusted");
    expect(first.evaluatedTokens).toBeGreaterThan(first.inputTokens);
    const later = await score(demo, tickets[1]!);
    expect(later.evaluatedTokens).toBe(later.inputTokens);
  });
});
