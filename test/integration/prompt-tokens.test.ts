/**
 * The prompt tokenizer that keeps a prompt's shared head (endpoint/scorer/prompt-tokens.ts): on
 * real llama.cpp tokenizers its tokens equal the whole prompt's for prompts of every kind the
 * scorer renders, heads taken from earlier prompts included; a vocabulary with a piece across
 * the cut is tokenized whole, where a naive cut would have differed; and a decision scored with
 * kept heads equals a fresh one bit for bit.
 */
import { GeneralChatWrapper, type LlamaModel, resolveChatWrapper, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { PromptTokenizer, renderPrompt } from "../../endpoint/scorer/prompt-tokens.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { decisionRequest, type KeyedQuestion } from "../helpers/decision-requests.ts";
import { generatedModel, sharedModel } from "../helpers/models.ts";

/** Characters that stress a tokenizer near the cut: quotes, escapes, digits, spaces, non-ASCII. */
const ALPHABET = [
  ..."abcdefghijklmnopqrstuvwxyz",
  ..."ABCXYZ",
  ..."0123456789",
  " ",
  "  ",
  "\n",
  "\t",
  '"',
  "\\",
  ",",
  ":",
  "{",
  "}",
  "[",
  "]",
  "é",
  "ß",
  "日本",
  "😀",
  "▁",
];

function randomText(random: SeededRandom, length: number): string {
  let text = "";
  for (let i = 0; i < length; i++) text += ALPHABET[random.nextUint32() % ALPHABET.length];
  return text;
}

/** A state as a request may carry one: a string, or JSON holding keys named like the prompt's. */
function randomState(random: SeededRandom): unknown {
  const text = randomText(random, 20 + (random.nextUint32() % 200));
  switch (random.nextUint32() % 3) {
    case 0:
      return text;
    case 1:
      return { criterion: text.slice(0, 9), evidence: [1, text], note: "x" };
    default:
      return [text, { options: 12 }, null];
  }
}

function randomQuestion(random: SeededRandom, i: number): KeyedQuestion {
  // Something to read on each side of the random part: a question or option of blanks is refused.
  const instructions = `Is ${randomText(random, random.nextUint32() % 40)} x?`;
  return random.nextUint32() % 2 === 0
    ? { key: `q${i}`, type: "noul", instructions }
    : {
        key: `q${i}`,
        type: "choice",
        instructions,
        options: [
          { id: "a", description: `a${randomText(random, random.nextUint32() % 12)}` },
          { id: "b", description: `b${randomText(random, random.nextUint32() % 12)}.` },
        ],
      };
}

function wholeTokens(
  model: LlamaModel,
  wrapper: ReturnType<typeof wrapperFor>,
  prompt: { system: string; user: string },
) {
  return renderPrompt(wrapper, prompt).tokenize(model.tokenizer);
}

function wrapperFor(model: LlamaModel) {
  return resolveChatWrapper(model) ?? new GeneralChatWrapper();
}

/** Whether tokenizing `run` in two at `cut` gives other tokens than tokenizing it whole. */
function naiveCutDiffers(model: LlamaModel, run: string, cut: number): boolean {
  const naive = [
    ...model.tokenize(run.slice(0, cut), false, "trimLeadingSpace"),
    ...model.tokenize(run.slice(cut), false, "trimLeadingSpace"),
  ];
  const whole = model.tokenize(run, false, "trimLeadingSpace");
  return naive.length !== whole.length || naive.some((token, i) => token !== whole[i]);
}

/** A state-first letters prompt of one two-option question. */
function twoOptionPrompt(state: string, instructions: string, descriptions: readonly [string, string]) {
  return buildDecisionPrompt(
    state,
    {
      instructions,
      options: [
        { id: "first", description: descriptions[0] },
        { id: "second", description: descriptions[1] },
      ],
    },
    "state-first",
    "letters",
  );
}

/**
 * Renders `rounds` states, each with several questions in both layouts, and returns how many
 * prompts' cut tokens differed from the whole prompt's, and how many were compared.
 */
function compareOnRandomPrompts(model: LlamaModel, tokenizer: PromptTokenizer, seed: number, rounds: number) {
  const random = new SeededRandom(seed);
  const wrapper = wrapperFor(model);
  let compared = 0;
  const differing: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const state = randomState(random);
    const questions = Array.from({ length: 3 }, (_, i) => randomQuestion(random, i));
    for (const layout of ["state-first", "policy-first"] as const) {
      const request = decisionRequest({ state, questions, layout });
      for (const question of request.questions) {
        const prompt = buildDecisionPrompt(request.state, question, layout, question.scoring);
        const cut: Token[] = tokenizer.tokens(prompt);
        const whole = wholeTokens(model, wrapper, prompt);
        compared++;
        if (cut.length !== whole.length || cut.some((token, i) => token !== whole[i]))
          differing.push(prompt.user);
      }
    }
  }
  return { compared, differing };
}

describe("PromptTokenizer on the generated model (SentencePiece)", () => {
  let model: DecisionModel;
  beforeAll(async () => {
    model = await DecisionModel.load({ modelPath: await generatedModel(), threads: 1 });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("cuts and gives the whole prompt's tokens over 120 random states in both layouts", () => {
    const tokenizer = PromptTokenizer.create(model.model, wrapperFor(model.model));
    expect(tokenizer.cuts).toBe(true);
    const { compared, differing } = compareOnRandomPrompts(model.model, tokenizer, 44, 120);
    expect(compared).toBe(720);
    expect(differing).toEqual([]);
    expect(tokenizer.reusedHeads).toBeGreaterThan(0);
  });

  it("keeps the head that prompts share: a state's yes/no questions, a policy's items", () => {
    const wrapper = wrapperFor(model.model);
    const tokenizer = PromptTokenizer.create(model.model, wrapper);
    const random = new SeededRandom(8);
    const state = randomText(random, 200);
    const questions: KeyedQuestion[] = ["Is it spam?", "Is it a refund?", "Is it urgent?"].map(
      (instructions, i) => ({
        key: `q${i}`,
        type: "noul",
        instructions,
      }),
    );
    const asked = decisionRequest({ state, questions });
    for (const question of asked.questions) {
      const prompt = buildDecisionPrompt(asked.state, question, "state-first", question.scoring);
      expect(tokenizer.tokens(prompt)).toEqual(wholeTokens(model.model, wrapper, prompt));
    }
    // The first question tokenized its head; the next two took it.
    expect(tokenizer.reusedHeads).toBe(2);
    for (const item of ["first item", "second item", "third item"]) {
      const request = decisionRequest({ state: item, questions: [questions[0]!], layout: "policy-first" });
      const prompt = buildDecisionPrompt(request.state, request.questions[0]!, "policy-first", "letters");
      expect(tokenizer.tokens(prompt)).toEqual(wholeTokens(model.model, wrapper, prompt));
    }
    expect(tokenizer.reusedHeads).toBe(4);
  });

  it("scores questions over one state, heads kept, bit-identical to fresh evaluations", async () => {
    const scorer = await DecisionScorer.create(model, { contextSize: 1024, prefixSlots: 1 });
    try {
      const random = new SeededRandom(7);
      const state = randomText(random, 300);
      const questions: KeyedQuestion[] = Array.from({ length: 5 }, (_, i) => ({
        key: `q${i}`,
        type: "noul",
        instructions: `Does it mention ${randomText(random, 8)}?`,
      }));
      const before = scorer.promptTokenizer.reusedHeads;
      const reused = await scorer.score(decisionRequest({ state, questions }));
      expect(scorer.promptTokenizer.reusedHeads - before).toBeGreaterThanOrEqual(4);
      expect(reused.answers.slice(1).every((answer) => answer.reusedTokens > 0)).toBe(true);
      const fresh = await scorer.score(decisionRequest({ state, questions }), { reuse: false });
      expect(reused.answers.map((answer) => answer.logits)).toEqual(
        fresh.answers.map((answer) => answer.logits),
      );
      expect(reused.answers.map((answer) => answer.inputTokens)).toEqual(
        fresh.answers.map((answer) => answer.inputTokens),
      );
    } finally {
      await scorer.dispose();
    }
  });
});

describe("PromptTokenizer on a vocabulary with pieces across the cut", () => {
  // `"c` and `"e` join the key's opening quote to its name, `,"` the comma to the quote, and `},`
  // `",` `]` `,` the comma to what ends the value before it: no cut near the last key is safe.
  const acrossCut = ['"c', '"e', ',"', "},", '",', "],"];
  let model: DecisionModel;
  beforeAll(async () => {
    model = await DecisionModel.load({
      modelPath: await generatedModel("tiny-across-cut", { extraPieces: acrossCut }),
      threads: 1,
    });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("tokenizes such prompts whole, where a naive cut would differ", () => {
    const wrapper = wrapperFor(model.model);
    const tokenizer = PromptTokenizer.create(model.model, wrapper);
    const { compared, differing } = compareOnRandomPrompts(model.model, tokenizer, 45, 40);
    expect(compared).toBe(240);
    expect(differing).toEqual([]);
    expect(tokenizer.reusedHeads).toBe(0);
    // What the check prevents: cut inside the key's opening quote, the tokens differ.
    const prompt = twoOptionPrompt("some text", "Is it spam?", ["yes", "no"]);
    expect(naiveCutDiffers(model.model, prompt.user, prompt.sharedHead + 2)).toBe(true);
  });
});

describe("PromptTokenizer where llama.cpp or node-llama-cpp splits the text another way", () => {
  // Found by a review on 2026-12-06: a user-defined piece ending at the cut (llama.cpp splits it
  // out first and, with a space prefix, puts a space after it), and a tail starting with a newline
  // (node-llama-cpp tokenizes such a run as it is). Both are now tokenized whole.
  let userDefined: DecisionModel;
  let spacePrefix: DecisionModel;
  beforeAll(async () => {
    userDefined = await DecisionModel.load({
      modelPath: await generatedModel("tiny-user-defined", {
        userDefinedPieces: ['."},"'],
        addSpacePrefix: true,
      }),
      threads: 1,
    });
    spacePrefix = await DecisionModel.load({
      modelPath: await generatedModel("tiny-space-prefix", { addSpacePrefix: true }),
      threads: 1,
    });
  });
  afterAll(async () => {
    await userDefined?.dispose();
    await spacePrefix?.dispose();
  });

  it("does not cut a vocabulary with user-defined pieces, where a naive cut would differ", () => {
    const tokenizer = PromptTokenizer.create(userDefined.model, wrapperFor(userDefined.model));
    expect(tokenizer.cuts).toBe(false);
    const { compared, differing } = compareOnRandomPrompts(userDefined.model, tokenizer, 47, 20);
    expect(compared).toBe(120);
    expect(differing).toEqual([]);
    const prompt = twoOptionPrompt("My card was charged twice", "Which team?", ["Billing.", "Other."]);
    expect(naiveCutDiffers(userDefined.model, prompt.user, prompt.sharedHead + 2)).toBe(true);
  });

  it("never starts a tail with whitespace, whatever shared head a caller gives", () => {
    // The general wrapper keeps the user message and the text after it in one run.
    const wrapper = new GeneralChatWrapper();
    for (const model of [spacePrefix, userDefined]) {
      const tokenizer = PromptTokenizer.create(model.model, wrapper);
      const user = '{"evidence":"x","criterion":"Is it?"}';
      for (let back = 0; back <= 4; back++) {
        const prompt = { system: "S", user, sharedHead: user.length - back };
        expect(tokenizer.tokens(prompt)).toEqual(wholeTokens(model.model, wrapper, prompt));
      }
    }
    // What that prevents: a run cut before a newline, on a model that adds a space prefix.
    expect(naiveCutDiffers(spacePrefix.model, 'x"}\n\n### Assistant', 3)).toBe(true);
  });
});

describe("PromptTokenizer on the third-party models in ../shared/models", () => {
  for (const file of ["llama-2-tiny-random.gguf", "stories260K.gguf"]) {
    const path = sharedModel(file);
    it.skipIf(path === undefined)(`gives the whole prompt's tokens on ${file}`, async () => {
      const model = await DecisionModel.load({ modelPath: path!, threads: 1 });
      try {
        const tokenizer = PromptTokenizer.create(model.model, wrapperFor(model.model));
        const { compared, differing } = compareOnRandomPrompts(model.model, tokenizer, 46, 40);
        expect(compared).toBe(240);
        expect(differing).toEqual([]);
        // Both are SentencePiece vocabularies without pieces across the cut: heads are kept.
        expect(tokenizer.cuts).toBe(true);
        expect(tokenizer.reusedHeads).toBeGreaterThan(0);
      } finally {
        await model.dispose();
      }
    });
  }
});
