/**
 * One pass of one question: render the prompt with the options in a given display order,
 * refuse it when it cannot fit, evaluate it on the best-fitting prefix slot, and read the option
 * logits (letters, or full-option likelihoods) in that display order. The scorer runs one pass
 * per question, or one per rotation under the cyclic option order (`option-order.ts`).
 */
import { performance } from "node:perf_hooks";
import type { LlamaModel, Token } from "node-llama-cpp";
import type { DecisionQuestion, DecisionRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { PromptTooLongError } from "../runtime/errors.ts";
import {
  type LetterReadout,
  type LetterSlots,
  letterReadoutRequest,
  massFromTopLetter,
  readLetters,
  TOP_TOKEN_READOUT,
} from "./letter-readout.ts";
import { type LikelihoodDetail, scoreOptionLikelihoods } from "./likelihood.ts";
import { buildDecisionPrompt } from "./prompt.ts";
import type { PromptSequence } from "./prompt-sequence.ts";
import type { PromptMessages } from "./prompt-tokens.ts";

/**
 * An upper bound on the characters one token covers, for refusing prompts that cannot fit
 * before tokenizing them. English averages about 4 characters per token; 16 leaves room for
 * long runs without letting a multi-megabyte state reach the tokenizer.
 */
export const MAX_CHARS_PER_TOKEN = 16;

/** What a pass needs from the scorer. */
export interface PassContext {
  readonly model: LlamaModel;
  readonly slots: LetterSlots;
  readonly contextSize: number;
  /** Tokens of a rendered prompt, through the model's chat template. */
  promptTokens(prompt: PromptMessages): Token[];
  /** The prefix slot that best fits `tokens`. */
  pick(tokens: readonly Token[]): PromptSequence;
}

/** The outcome of one pass, in its display order. */
export interface PassResult {
  readonly logits: number[];
  readonly allowedTokenMass: number | null;
  readonly likelihood?: LikelihoodDetail;
  readonly inputTokens: number;
  readonly reusedTokens: number;
  readonly evaluatedTokens: number;
  readonly promptVersion: string;
  readonly promptSha256: string;
  readonly renderMs: number;
  readonly evaluateMs: number;
}

/**
 * Scores `question` (its options already in display order) about the request's state; a prompt
 * that cannot fit is refused naming the question as System One does (`questions.<key>`).
 */
export async function scorePass(
  context: PassContext,
  request: Pick<DecisionRequest, "state" | "layout" | "token_mass">,
  question: DecisionQuestion,
  reuse: boolean,
): Promise<PassResult> {
  const field = `questions.${question.key}`;
  const t0 = performance.now();
  const prompt = buildDecisionPrompt(request.state, question, request.layout, question.scoring);
  // node-llama-cpp keeps one cell of a sequence free: a prompt filling every cell would have its
  // beginning erased (a context shift) before its last token and be scored on what was left.
  const capacity = context.contextSize - 1;
  // Cheap check first: no token covers more than MAX_CHARS_PER_TOKEN characters, so a prompt
  // this long cannot fit, and tokenizing it (synchronous, on the event loop) is never started.
  const characters = prompt.system.length + prompt.user.length;
  if (characters > capacity * MAX_CHARS_PER_TOKEN) {
    throw new PromptTooLongError(field, Math.ceil(characters / MAX_CHARS_PER_TOKEN), capacity, "at least");
  }
  const tokens = context.promptTokens(prompt);
  if (tokens.length > capacity) {
    throw new PromptTooLongError(field, tokens.length, capacity);
  }
  const t1 = performance.now();
  const model = context.model;
  const sequence = context.pick(tokens);
  const provenance = { promptVersion: prompt.promptVersion, promptSha256: prompt.promptSha256 };
  if (question.scoring === "letters") {
    const letterTokens = context.slots.tokens.slice(0, question.options.length);
    const read = request.token_mass
      ? await lettersWithMass(sequence, tokens, model, letterTokens)
      : await lettersAlone(sequence, tokens, model, letterTokens);
    return {
      ...read,
      inputTokens: tokens.length,
      ...provenance,
      renderMs: t1 - t0,
      evaluateMs: performance.now() - t1,
    };
  }
  const optionTokens = question.options.map((option) => model.tokenize(option.description));
  const longest = Math.max(...optionTokens.map((t) => t.length));
  if (tokens.length + longest > capacity) {
    throw new PromptTooLongError(field, tokens.length + longest, capacity);
  }
  const scored = await scoreOptionLikelihoods(sequence, tokens, optionTokens, reuse);
  return {
    logits: scored.normalized,
    allowedTokenMass: null,
    likelihood: {
      raw: scored.raw,
      normalized: scored.normalized,
      tokens: optionTokens.map((t) => t.length),
    },
    inputTokens: tokens.length,
    reusedTokens: scored.reusedTokens,
    evaluatedTokens: scored.evaluatedTokens,
    ...provenance,
    renderMs: t1 - t0,
    evaluateMs: performance.now() - t1,
  };
}

/** A letter readout and the prompt tokens it took from the cache and evaluated. */
type CountedReadout = LetterReadout & { readonly reusedTokens: number; readonly evaluatedTokens: number };

/** The letters' distribution over the letters alone, no mass (`"token_mass": false`). */
async function lettersAlone(
  sequence: PromptSequence,
  tokens: readonly Token[],
  model: LlamaModel,
  letterTokens: readonly Token[],
): Promise<CountedReadout> {
  const evaluation = await sequence.evaluate(tokens, letterReadoutRequest(model, letterTokens, false));
  return {
    ...readLetters(evaluation.probabilities, letterTokens, false),
    reusedTokens: evaluation.reusedTokens,
    evaluatedTokens: evaluation.evaluatedTokens,
  };
}

/**
 * The letters' log-probabilities over the whole vocabulary and their mass. The prompt is
 * evaluated for the top token over the unbiased vocabulary and its probability there (a sort of
 * the vocabulary, one number back). When it is a letter, as it is for a model that answers the
 * question, the same position is read again for the letters' own distribution: the mass is the
 * top letter's probability over its share among the letters, and each letter's log-probability
 * log(share x mass). When it is not, it is read again for the full map, which gives both as it
 * always did (and a letter that underflowed to 0 there takes the letters alone, read once more).
 * A second readout comes from the logits llama.cpp kept (`kept-logits.ts`), or, where that is off,
 * from the last two tokens evaluated again: the same bits either way. The path depends on the
 * prompt's logits alone, so a reused prompt takes the path, and gets the bits, of a fresh one.
 */
async function lettersWithMass(
  sequence: PromptSequence,
  tokens: readonly Token[],
  model: LlamaModel,
  letterTokens: readonly Token[],
): Promise<CountedReadout> {
  const top = await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
  let evaluatedTokens = top.evaluatedTokens;
  const again = async (fullVocabulary: boolean) => {
    const evaluation = await sequence.readAgain(
      tokens,
      letterReadoutRequest(model, letterTokens, fullVocabulary),
    );
    evaluatedTokens += evaluation.evaluatedTokens;
    return evaluation.probabilities;
  };
  const counts = () => ({ reusedTokens: top.reusedTokens, evaluatedTokens });
  const onTop = top.token === undefined || top.token === null ? -1 : letterTokens.indexOf(top.token);
  if (onTop >= 0) {
    const letters = await again(false);
    const shares = letterTokens.map((token) => letters.get(token) ?? 0);
    const mass = massFromTopLetter(shares[onTop]!, top.confidence);
    if (mass !== undefined)
      return { logits: shares.map((q) => Math.log(q * mass)), allowedTokenMass: mass, ...counts() };
  }
  const read = readLetters(await again(true), letterTokens, true);
  if (read.logits.every(Number.isFinite)) return { ...read, ...counts() };
  const { logits } = readLetters(await again(false), letterTokens, false);
  return { logits, allowedTokenMass: read.allowedTokenMass, ...counts() };
}
