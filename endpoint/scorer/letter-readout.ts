/**
 * The option letters as answer slots: checks that a model can read them, and turns the
 * probabilities llama.cpp returns at the answer position into option logits.
 */
import { type LlamaModel, LlamaText, type Token, TokenBias } from "node-llama-cpp";
import { SlotCheckError } from "../runtime/errors.ts";
import { OPTION_LETTERS } from "./prompt.ts";
import type { NextTokenReadout } from "./prompt-sequence.ts";

/** Logit bias that lifts every option letter far above the rest of the vocabulary. */
const LETTER_BIAS = 100;

/** The letter tokens of a model, checked. */
export interface LetterSlots {
  /** Token of `OPTION_LETTERS[i]`. */
  readonly tokens: readonly Token[];
}

/**
 * Checks the three conditions of the method on a rendered prompt: each letter is one token,
 * the letters are distinct tokens, and `prompt + letter` tokenizes as `prompt tokens + letter`.
 *
 * The letter's token is read in context, after the prompt: SentencePiece tokenizers that add a
 * space prefix turn a lone "A" into "▁A" but an "A" after a newline into plain "A", and only the
 * token at the answer position matters. The prompt's end (the assistant turn's opening) is fixed
 * by the chat template, so one probe prompt per model is enough.
 */
export function checkLetterSlots(model: LlamaModel, probe: LlamaText, modelName: string): LetterSlots {
  const probeTokens = probe.tokenize(model.tokenizer);
  const tokens: Token[] = [];
  for (const letter of OPTION_LETTERS) {
    const joined = LlamaText([probe, letter]).tokenize(model.tokenizer);
    const keepsPrompt = probeTokens.every((token, i) => joined[i] === token);
    if (!keepsPrompt) {
      throw new SlotCheckError(
        `model ${modelName}: "${letter}" merges with the end of the prompt, so prompt + letter does not tokenize ` +
          "as the prompt's tokens plus the letter's token",
      );
    }
    const added = joined.length - probeTokens.length;
    if (added !== 1) {
      throw new SlotCheckError(
        `model ${modelName}: option letter "${letter}" is ${added} tokens at the answer position; ` +
          "the direct-options method needs exactly one",
      );
    }
    const token = joined.at(-1)!;
    const clash = tokens.indexOf(token);
    if (clash >= 0) {
      throw new SlotCheckError(
        `model ${modelName}: option letters "${OPTION_LETTERS[clash]}" and "${letter}" are the same token ${token}`,
      );
    }
    tokens.push(token);
  }
  return { tokens };
}

/** Option logits read at the answer position. */
export interface LetterReadout {
  /** Log-probabilities of the letters: over the whole vocabulary when the mass is known, else over the letters. */
  readonly logits: number[];
  /** Share of the full-vocabulary probability the letters hold, or null when not read. */
  readonly allowedTokenMass: number | null;
}

/**
 * The readout to request at the answer position. With `fullVocabulary`, the full map (costly at
 * a large vocabulary); otherwise only the letters, each biased far above the rest and kept by
 * top-k, which llama.cpp renormalizes over the letters alone (exact to float precision).
 */
export function letterReadoutRequest(
  model: LlamaModel,
  letterTokens: readonly Token[],
  fullVocabulary: boolean,
): NextTokenReadout {
  if (fullVocabulary) return { probabilities: true };
  const bias = new TokenBias(model.tokenizer);
  for (const token of letterTokens) bias.set(token, { logit: LETTER_BIAS });
  // topP must be 1 (the default drops letters) and temperature above 0 (greedy ignores topK).
  return {
    probabilities: true,
    options: { temperature: 1, topK: letterTokens.length, topP: 1, tokenBias: bias },
  };
}

/** Reads the letters' logits (and mass, when the map covers the vocabulary) from a probability map. */
export function readLetters(
  probabilities: ReadonlyMap<Token, number>,
  letterTokens: readonly Token[],
  fullVocabulary: boolean,
): LetterReadout {
  const p = letterTokens.map((token) => probabilities.get(token) ?? 0);
  // Single-precision probabilities can sum past 1 by rounding (1.0000000087 on a sure answer),
  // which the response contract rightly refuses: a share of the vocabulary is at most 1.
  const mass = Math.min(
    1,
    p.reduce((a, b) => a + b, 0),
  );
  return { logits: p.map((value) => Math.log(value)), allowedTokenMass: fullVocabulary ? mass : null };
}

/**
 * The readout that prices the allowed-token mass without the full map: the greedy next token over
 * the whole, unbiased vocabulary and its probability there. It costs llama.cpp's sort of the
 * vocabulary and one number back, where the full map also builds a 151,936-entry JavaScript Map
 * (55 to 87 ms alone at Qwen2's vocabulary, docs/benchmarks.md).
 */
export const TOP_TOKEN_READOUT: NextTokenReadout = {
  token: true,
  confidence: true,
  options: { temperature: 0 },
};

/**
 * The letters' share of the full-vocabulary probability, from the top token over the whole
 * vocabulary when it is a letter: its probability there (`confidence`) is its share among the
 * letters times the mass, so the mass is their ratio. Undefined when either is not a positive
 * number (then only the full map gives the mass).
 */
export function massFromTopLetter(share: number, confidence: number | undefined): number | undefined {
  if (!(share > 0) || confidence === undefined || !(confidence > 0)) return undefined;
  // Rounding can take the ratio a hair past 1 on a sure answer; a share is at most 1.
  return Math.min(1, confidence / share);
}
