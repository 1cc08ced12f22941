/**
 * The decision scorer: a state and questions in, a probability distribution over each
 * question's declared options out, read from llama.cpp in one forward pass per question with
 * no token generated (the direct-options method, docs/architecture.md).
 */
import { performance } from "node:perf_hooks";
import {
  type ChatHistoryItem,
  type ChatWrapper,
  GeneralChatWrapper,
  type LlamaContext,
  type LlamaText,
  resolveChatWrapper,
  type Token,
} from "node-llama-cpp";
import { argmax, confidence, expectedLevel, softmax } from "../../shared/domain/probability.ts";
import type { DecisionModel } from "../runtime/decision-model.ts";
import { PromptTooLongError, RuntimeDisposedError } from "../runtime/errors.ts";
import { TaskAbortedError, WorkQueue } from "../runtime/work-queue.ts";
import { checkLetterSlots, type LetterSlots, letterReadoutRequest, readLetters } from "./letter-readout.ts";
import { scoreOptionLikelihoods } from "./likelihood.ts";
import { PrefixSlots, prefixSlotCount, type SlotStats } from "./prefix-slots.ts";
import { buildDecisionPrompt, type DecisionPrompt } from "./prompt.ts";
import { PromptSequence } from "./prompt-sequence.ts";
import {
  type DecisionQuestion,
  type DecisionRequest,
  type DecisionRequestInput,
  parseDecisionRequest,
} from "./request.ts";
import type { DecisionResult, QuestionResult } from "./results.ts";

/**
 * An upper bound on the characters one token covers, for refusing prompts that cannot fit
 * before tokenizing them. English averages about 4 characters per token; 16 leaves room for
 * long runs without letting a multi-megabyte state reach the tokenizer.
 */
export const MAX_CHARS_PER_TOKEN = 16;

/** Options of {@link DecisionScorer.create}. */
export interface ScorerOptions {
  /** Tokens the context holds; prompts longer than this are rejected. @default min(4096, model's training context) */
  readonly contextSize?: number;
  /** Tokens evaluated per llama.cpp batch. @default min(512, contextSize) */
  readonly batchSize?: number;
  /** Requests allowed to wait for the model; more are refused with QueueFullError. @default Infinity */
  readonly maxQueue?: number;
  /**
   * Flash attention: 10 to 15 percent faster prefill on CPU, but a reused prefix then gives logits
   * that differ from a fresh evaluation by up to about 5e-3 (measured on the tiny model), while
   * without it reuse is bit-exact. Off by default so that the same item always gets the same
   * distribution. @default false
   */
  readonly flashAttention?: boolean;
  /**
   * Cached prefixes kept at once (one llama.cpp sequence each, `contextSize` tokens of KV cache
   * apiece), so that interleaved policies each keep their preamble; "auto" fits as many as
   * `prefixCacheBytes` holds (1 to 8). @default 1
   */
  readonly prefixSlots?: number | "auto";
  /** KV-cache memory the automatic slot count may use. @default 512 MiB */
  readonly prefixCacheBytes?: number;
}

/** Options of one {@link DecisionScorer.score} call. */
export interface ScoreOptions {
  /**
   * Reuse cached work: the prefix shared with earlier prompts, and the prompt across the options
   * of a likelihood question. Turn off only to measure or check. @default true
   */
  readonly reuse?: boolean;
  /** Stops between questions when aborted (and stops waiting for the model). */
  readonly signal?: AbortSignal;
  /** Stops only the wait for the model (a shutdown refuses queued requests, not running ones). */
  readonly queueSignal?: AbortSignal;
}

export type { DecisionResult, QuestionResult, QuestionTimings } from "./results.ts";

/** Scores decisions on one model; requests run one at a time, each on the prefix slot it fits. */
export class DecisionScorer {
  private readonly prefixes: PrefixSlots;
  private readonly wrapper: ChatWrapper;
  private readonly slots: LetterSlots;
  private readonly work: WorkQueue;
  private disposed = false;

  private constructor(
    readonly model: DecisionModel,
    private readonly context: LlamaContext,
    wrapper: ChatWrapper,
    slots: LetterSlots,
    maxQueue: number,
  ) {
    this.work = new WorkQueue(maxQueue);
    this.wrapper = wrapper;
    this.slots = slots;
    const sequences: PromptSequence[] = [];
    while (context.sequencesLeft > 0) sequences.push(new PromptSequence(context.getSequence()));
    this.prefixes = new PrefixSlots(sequences);
  }

  /**
   * Creates the scorer's context and checks that the model can read option letters.
   *
   * @example
   * const scorer = await DecisionScorer.create(model);
   * const result = await scorer.score({ state: "charged twice", questions: [...] });
   */
  static async create(model: DecisionModel, options: ScorerOptions = {}): Promise<DecisionScorer> {
    const contextSize = options.contextSize ?? Math.min(4096, model.trainContextSize);
    const wrapper = resolveChatWrapper(model.model) ?? new GeneralChatWrapper();
    const probe = renderPrompt(wrapper, { system: "probe", user: "probe" });
    const slots = checkLetterSlots(model.model, probe, model.path);
    const context = await model.model.createContext({
      contextSize,
      batchSize: options.batchSize ?? Math.min(512, contextSize),
      threads: model.threads,
      flashAttention: options.flashAttention ?? false,
      sequences: await prefixSlotCount(model, contextSize, options),
    });
    return new DecisionScorer(model, context, wrapper, slots, options.maxQueue ?? Number.POSITIVE_INFINITY);
  }

  /** Tokens one prompt may use. */
  get contextSize(): number {
    return this.prefixes.first.contextSize;
  }

  /** Prefix slots, hits and misses since start. */
  get cacheStats(): SlotStats {
    return this.prefixes.stats();
  }

  /** Validates and scores a decision; concurrent calls wait their turn. */
  async score(input: DecisionRequestInput, options: ScoreOptions = {}): Promise<DecisionResult> {
    const request = parseDecisionRequest(input);
    return this.work.run(
      () => this.scoreNow(request, options),
      eitherSignal(options.signal, options.queueSignal),
    );
  }

  /** Forgets the cached prefix, so the next decision is evaluated from scratch. */
  async clearCache(): Promise<void> {
    await this.work.run(() => this.prefixes.clear());
  }

  /**
   * Runs `task` with exclusive use of the prefix slot that best fits `tokens`, queued with the
   * decisions (the chat endpoint generates text on these sequences, so one model serves both).
   */
  withSequence<T>(
    tokens: readonly Token[],
    task: (sequence: PromptSequence) => Promise<T>,
    signal?: AbortSignal,
    queueSignal?: AbortSignal,
  ): Promise<T> {
    return this.work.run(() => task(this.prefixes.pick(tokens)), eitherSignal(signal, queueSignal));
  }

  /** Requests waiting for the model. */
  get queueDepth(): number {
    return this.work.waiting;
  }

  /** Whether a request is being evaluated now. */
  get busy(): boolean {
    return this.work.busy;
  }

  /** The chat template wrapper the prompts are rendered with. */
  get chatWrapper(): ChatWrapper {
    return this.wrapper;
  }

  /** Renders the tokens of one question's prompt (for benchmarks and tests). */
  promptTokens(prompt: Pick<DecisionPrompt, "system" | "user">): Token[] {
    return renderPrompt(this.wrapper, prompt).tokenize(this.model.model.tokenizer);
  }

  private async scoreNow(request: DecisionRequest, options: ScoreOptions): Promise<DecisionResult> {
    if (this.disposed) throw new RuntimeDisposedError("scorer");
    const started = performance.now();
    const answers: QuestionResult[] = [];
    for (const [index, question] of request.questions.entries()) {
      if (options.signal?.aborted) {
        throw new TaskAbortedError(`stopped after ${index} of ${request.questions.length} questions`, {
          cause: options.signal.reason,
        });
      }
      if (options.reuse === false) await this.prefixes.clear();
      answers.push(await this.scoreQuestion(request, question, index, options.reuse !== false));
    }
    return {
      modelSha256: this.model.sha256,
      answers,
      usage: {
        inputTokens: answers.reduce((sum, a) => sum + a.inputTokens, 0),
        evaluatedTokens: answers.reduce((sum, a) => sum + a.evaluatedTokens, 0),
      },
      totalMs: performance.now() - started,
    };
  }

  private async scoreQuestion(
    request: DecisionRequest,
    question: DecisionQuestion,
    index: number,
    reuse: boolean,
  ): Promise<QuestionResult> {
    const t0 = performance.now();
    const prompt = buildDecisionPrompt(request.state, question, request.layout, question.scoring);
    // Cheap check first: no token covers more than MAX_CHARS_PER_TOKEN characters, so a prompt
    // this long cannot fit, and tokenizing it (synchronous, on the event loop) is never started.
    const characters = prompt.system.length + prompt.user.length;
    if (characters > this.contextSize * MAX_CHARS_PER_TOKEN) {
      throw new PromptTooLongError(
        `questions[${index}]`,
        Math.ceil(characters / MAX_CHARS_PER_TOKEN),
        this.contextSize,
        "at least",
      );
    }
    const tokens = this.promptTokens(prompt);
    if (tokens.length > this.contextSize) {
      throw new PromptTooLongError(`questions[${index}]`, tokens.length, this.contextSize);
    }
    const t1 = performance.now();
    const model = this.model.model;
    let logits: number[];
    let allowedTokenMass: number | null = null;
    let likelihood: QuestionResult["likelihood"];
    let reusedTokens: number;
    let evaluatedTokens: number;
    let t2: number;
    const sequence = this.prefixes.pick(tokens);
    if (question.scoring === "letters") {
      const letterTokens = this.slots.tokens.slice(0, question.options.length);
      const full = request.tokenMass;
      const evaluation = await sequence.evaluate(tokens, letterReadoutRequest(model, letterTokens, full));
      t2 = performance.now();
      ({ reusedTokens, evaluatedTokens } = evaluation);
      const readout = readLetters(evaluation.probabilities, letterTokens, full);
      ({ logits, allowedTokenMass } = readout);
      if (logits.some((l) => !Number.isFinite(l))) {
        // A letter underflowed to 0 in the full map: read the letters alone (one token re-evaluated).
        const retry = await sequence.evaluate(
          tokens.slice(),
          letterReadoutRequest(model, letterTokens, false),
        );
        logits = readLetters(retry.probabilities, letterTokens, false).logits;
      }
    } else {
      const optionTokens = question.options.map((option) => model.tokenize(option.description));
      const longest = Math.max(...optionTokens.map((t) => t.length));
      if (tokens.length + longest > this.contextSize) {
        throw new PromptTooLongError(`questions[${index}]`, tokens.length + longest, this.contextSize);
      }
      const scored = await scoreOptionLikelihoods(sequence, tokens, optionTokens, reuse);
      t2 = performance.now();
      ({ reusedTokens, evaluatedTokens } = scored);
      likelihood = {
        raw: scored.raw,
        normalized: scored.normalized,
        tokens: optionTokens.map((t) => t.length),
      };
      logits = scored.normalized;
    }
    const probabilities = softmax(logits, question.temperature);
    const rawProbabilities = softmax(logits, 1);
    const optionIds = question.options.map((option) => option.id);
    const t3 = performance.now();
    return {
      key: question.key,
      type: question.type,
      scoring: question.scoring,
      optionIds,
      probabilities,
      rawProbabilities,
      logits,
      temperature: question.temperature,
      chosen: optionIds[argmax(logits)]!,
      confidence: confidence(probabilities),
      ...(question.type === "score" ? { score: expectedLevel(probabilities) } : {}),
      ...(question.type === "noul" ? { noul: probabilities[0]! } : {}),
      allowedTokenMass,
      ...(likelihood ? { likelihood } : {}),
      inputTokens: tokens.length,
      reusedTokens,
      evaluatedTokens,
      promptVersion: prompt.promptVersion,
      promptSha256: prompt.promptSha256,
      timings: { renderMs: t1 - t0, evaluateMs: t2 - t1, readoutMs: t3 - t2, totalMs: t3 - t0 },
    };
  }

  /** Frees the context (the model stays loaded); safe to call twice. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.work.drain();
    await this.context.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** Renders system and user messages with the model's chat template, ending at the answer position. */
function renderPrompt(wrapper: ChatWrapper, prompt: Pick<DecisionPrompt, "system" | "user">): LlamaText {
  const chatHistory: ChatHistoryItem[] = [
    { type: "system", text: prompt.system },
    { type: "user", text: prompt.user },
    { type: "model", response: [] },
  ];
  return wrapper.generateContextState({ chatHistory }).contextText;
}

/** A signal that aborts when either does (undefined when neither is given). */
function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}
