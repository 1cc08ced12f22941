/**
 * One llama.cpp context sequence that remembers what it has evaluated, so that a prompt sharing
 * a prefix with the previous one only evaluates the tokens after that prefix.
 *
 * One sequence with erase-back is used on purpose: several sequences evaluated concurrently in
 * one context sometimes returned another row's probabilities (docs/architecture.md), while
 * erasing back to the shared prefix matches scoring from scratch. Scoring an object's items
 * together on several sequences was measured again on 2026-12-06 (test/bench/scorer-batch.bench.ts):
 * exact over those items but only 1.03x to 1.07x items/s on CPU, so it is not used (docs/benchmarks.md).
 */
import type {
  ControlledEvaluateInputItem,
  LlamaContextSequence,
  SequenceEvaluateOptions,
  Token,
} from "node-llama-cpp";
import {
  type KeptReadout,
  keptLogitsState,
  type NextTokenReadout,
  readKeptLogits,
  sameReadout,
  settleKeptLogits,
} from "./kept-logits.ts";

export type { NextTokenReadout } from "./kept-logits.ts";

/** Result of evaluating a prompt. */
export interface PromptEvaluation {
  /** Full-vocabulary or restricted probabilities at the last position (empty when not asked). */
  readonly probabilities: ReadonlyMap<Token, number>;
  /** The sampler's next token, when asked (null when llama.cpp gave none). */
  readonly token?: Token | null;
  /** That token's probability among the candidates the sampler kept, when asked. */
  readonly confidence?: number;
  /** Tokens taken from the cache instead of evaluated. */
  readonly reusedTokens: number;
  /** Tokens evaluated now. */
  readonly evaluatedTokens: number;
}

/** Length of the common prefix of two token lists. */
export function commonPrefixLength(a: readonly Token[], b: readonly Token[]): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a[i] === b[i]) i++;
  return i;
}

/**
 * How many cached tokens a prompt may reuse: the shared prefix, leaving at least the last two
 * tokens (one, for a one-token prompt) to evaluate (see {@link PromptSequence.evaluate}).
 */
export function reusableLength(cached: readonly Token[], tokens: readonly Token[]): number {
  return Math.max(0, Math.min(commonPrefixLength(cached, tokens), tokens.length - 2));
}

/** A context sequence with prefix reuse. Not safe for concurrent use: callers serialize. */
export class PromptSequence {
  /**
   * The prompt whose last position the context's kept logits hold: set by {@link evaluate}, unset
   * by anything else that changes the cache.
   */
  private lastEvaluated: readonly Token[] | undefined;

  constructor(private readonly sequence: LlamaContextSequence) {}

  /** Tokens the sequence can hold. */
  get contextSize(): number {
    return this.sequence.contextSize;
  }

  /** The tokens currently cached, in order. */
  get tokens(): readonly Token[] {
    return this.sequence.contextTokens;
  }

  /** Tokens currently evaluated in the sequence. */
  get length(): number {
    return this.sequence.nextTokenIndex;
  }

  /** Drops everything after the first `length` tokens. */
  async truncate(length: number): Promise<void> {
    this.lastEvaluated = undefined;
    const end = this.sequence.nextTokenIndex;
    if (length < end) await this.sequence.eraseContextTokenRanges([{ start: length, end }]);
  }

  /** Forgets all cached tokens. */
  async clear(): Promise<void> {
    await this.truncate(0);
  }

  /**
   * Evaluates `tokens` (reusing the longest cached prefix) and reads `readout` after the last one.
   * At least the last two tokens are always evaluated: the last one because its logits are what
   * the readout needs, and a second because llama.cpp computes a one-token batch with another
   * kernel (matrix-vector) whose last bits differ (about 1e-7 in a probability) from the
   * matrix-matrix kernel of a fresh evaluation; with two, reuse stays bit-exact.
   */
  async evaluate(tokens: readonly Token[], readout: NextTokenReadout): Promise<PromptEvaluation> {
    if (tokens.length === 0) throw new RangeError("cannot evaluate an empty prompt");
    const reused = reusableLength(this.sequence.contextTokens, tokens);
    await this.truncate(reused);
    let rest = tokens.slice(reused);
    // node-llama-cpp cuts an evaluation into batches of the context's batch size, so a multiple of
    // it plus one token would end on a batch of one: the other kernel, whose logits a reuse of the same
    // prompt (which evaluates two) would not reproduce. Such a prompt ends on two instead.
    if (rest.length > 2 && rest.length % this.sequence.context.batchSize === 1) {
      await this.sequence.controlledEvaluate(rest.slice(0, -2));
      rest = rest.slice(-2);
    }
    const input: ControlledEvaluateInputItem[] = rest.slice(0, -1);
    input.push([rest.at(-1)!, { generateNext: readout }]);
    const output = await this.sequence.controlledEvaluate(input);
    this.lastEvaluated = tokens;
    const next = output.at(-1)?.next;
    if (readout.probabilities && !next?.probabilities)
      throw new Error("llama.cpp returned no probabilities for the last prompt token");
    if (readout.confidence && next?.confidence === undefined)
      throw new Error("llama.cpp returned no confidence for the last prompt token");
    return {
      probabilities: next?.probabilities ?? new Map(),
      ...(readout.token ? { token: next?.token ?? null } : {}),
      ...(next?.confidence === undefined ? {} : { confidence: next.confidence }),
      reusedTokens: reused,
      evaluatedTokens: tokens.length - reused,
    };
  }

  /**
   * A second readout after the last position of `tokens`: read from the logits llama.cpp kept
   * when {@link evaluate} just evaluated this very prompt (no token evaluated, `kept-logits.ts`),
   * or, when that is not possible or not trusted for this model, by evaluating it again.
   */
  async readAgain(tokens: readonly Token[], readout: NextTokenReadout): Promise<PromptEvaluation> {
    const model = this.sequence.model;
    const kept = keptLogitsState(model).state;
    // The kept logits are this prompt's only if nothing ran since, and no other sequence shares the context.
    const readable =
      this.lastEvaluated === tokens &&
      this.sequence.nextTokenIndex === tokens.length &&
      this.sequence.context.totalSequences === 1;
    if (kept === "off" || !readable) return this.evaluate(tokens, readout);
    if (kept === "unchecked") {
      // The check: the last tokens evaluated again with this readout, then the same readout read
      // from the logits that evaluation kept. Same logits: any difference is the internals'.
      const evaluated = await this.evaluate(tokens, readout);
      const read = await this.readKept(readout);
      if (read)
        settleKeptLogits(
          model,
          sameReadout(readout, read, { token: evaluated.token ?? null, ...evaluated }) ||
            "a readout of kept logits differed from the evaluation that kept them",
        );
      return evaluated;
    }
    const read = await this.readKept(readout);
    if (!read) return this.evaluate(tokens, readout);
    return {
      probabilities: read.probabilities ?? new Map(),
      ...(readout.token ? { token: read.token } : {}),
      ...(read.confidence === undefined ? {} : { confidence: read.confidence }),
      reusedTokens: tokens.length,
      evaluatedTokens: 0,
    };
  }

  /** `readout` from the kept logits, or undefined when that failed (the model's shortcut is then off). */
  private async readKept(readout: NextTokenReadout): Promise<KeptReadout | undefined> {
    try {
      const read = await readKeptLogits(this.sequence, readout);
      if (readout.probabilities && !read.probabilities) throw new Error("no probabilities came back");
      if (readout.confidence && read.confidence === undefined) throw new Error("no confidence came back");
      return read;
    } catch (error) {
      settleKeptLogits(this.sequence.model, `reading kept logits failed: ${(error as Error).message}`);
      return undefined;
    }
  }

  /**
   * Evaluates `tokens` from an empty cache and reads nothing, or (with `outputRow`) only the greedy
   * next token after the last one: the floors a decision's time is measured against. Without an
   * output row llama.cpp skips the output projection (vocabulary x width) that every readout pays.
   */
  async prefill(tokens: readonly Token[], outputRow: boolean): Promise<void> {
    await this.clear();
    if (!outputRow) {
      await this.sequence.evaluateWithoutGeneratingNewTokens(tokens.slice());
      return;
    }
    const input: ControlledEvaluateInputItem[] = tokens.slice(0, -1);
    input.push([tokens.at(-1)!, { generateNext: { token: true } }]);
    await this.sequence.controlledEvaluate(input);
  }

  /**
   * Appends `tokens` after what is cached and returns the full-vocabulary probabilities after
   * each of them (one map per token, in order).
   */
  async extend(tokens: readonly Token[]): Promise<ReadonlyMap<Token, number>[]> {
    if (tokens.length === 0) return [];
    this.lastEvaluated = undefined;
    const output = await this.sequence.controlledEvaluate(
      tokens.map((token): ControlledEvaluateInputItem => [token, { generateNext: { probabilities: true } }]),
    );
    return tokens.map((_, i) => {
      const probabilities = output[i]?.next?.probabilities;
      if (!probabilities)
        throw new Error(`llama.cpp returned no probabilities at continuation position ${i}`);
      return probabilities;
    });
  }

  /**
   * Evaluates `tokens` (reusing the cached prefix) and then generates tokens one by one, each
   * with the sampler's probabilities when asked; stops at an end-of-generation token or when
   * the caller stops iterating.
   */
  async *generate(
    tokens: readonly Token[],
    sampling: SequenceEvaluateOptions,
    withProbabilities: boolean,
  ): AsyncGenerator<{ token: Token; probabilities?: ReadonlyMap<Token, number> }> {
    if (tokens.length === 0) throw new RangeError("cannot generate from an empty prompt");
    const reused = reusableLength(this.sequence.contextTokens, tokens);
    await this.truncate(reused);
    yield* this.sequence.evaluateWithMetadata(
      tokens.slice(reused),
      { probabilities: withProbabilities },
      sampling,
    );
  }
}
