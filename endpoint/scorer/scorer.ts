/**
 * The decision scorer: a state and questions in, a probability distribution over each
 * question's declared options out, read from llama.cpp in one forward pass per question with
 * no token generated (the direct-options method, docs/architecture.md).
 */
import { performance } from "node:perf_hooks";
import {
  type ChatWrapper,
  GeneralChatWrapper,
  type LlamaContext,
  resolveChatWrapper,
  type Token,
} from "node-llama-cpp";
import type {
  DecisionQuestion,
  DecisionRequest,
  DecisionResult,
  QuestionResult,
} from "../../shared/domain/contracts/system-one/index.ts";
import type { DecisionModel } from "../runtime/decision-model.ts";
import { RuntimeDisposedError } from "../runtime/errors.ts";
import { TaskAbortedError, type TaskPriority, WorkQueue } from "../runtime/work-queue.ts";
import { checkLetterSlots, type LetterSlots } from "./letter-readout.ts";
import { optionPasses } from "./option-order.ts";
import { PrefixSlots, prefixSlotCount, type SlotStats } from "./prefix-slots.ts";
import { PromptSequence } from "./prompt-sequence.ts";
import { type PromptMessages, PromptTokenizer, renderPrompt } from "./prompt-tokens.ts";
import { type PassContext, type PassResult, scorePass } from "./question-pass.ts";
import { readQuestion } from "./question-readout.ts";

export { MAX_CHARS_PER_TOKEN } from "./question-pass.ts";

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
   * Cached prefixes kept at once (one llama.cpp context of one sequence each, `contextSize` tokens
   * of KV cache apiece), so that interleaved policies each keep their preamble; "auto" fits as
   * many as `prefixCacheBytes` holds (1 to 8). @default 1
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
  /** "batch" waits behind every live request. @default "live" */
  readonly priority?: TaskPriority;
}

/** Scores decisions on one model; requests run one at a time, each on the prefix slot it fits. */
export class DecisionScorer {
  private readonly prefixes: PrefixSlots;
  private readonly wrapper: ChatWrapper;
  private readonly tokenizer: PromptTokenizer;
  private readonly work: WorkQueue;
  private readonly passContext: PassContext;
  private disposed = false;

  private constructor(
    readonly model: DecisionModel,
    private readonly contexts: readonly LlamaContext[],
    wrapper: ChatWrapper,
    slots: LetterSlots,
    maxQueue: number,
  ) {
    this.work = new WorkQueue(maxQueue);
    this.wrapper = wrapper;
    this.tokenizer = PromptTokenizer.create(model.model, wrapper);
    this.prefixes = new PrefixSlots(contexts.map((context) => new PromptSequence(context.getSequence())));
    this.passContext = {
      model: model.model,
      slots,
      contextSize: this.prefixes.first.contextSize,
      promptTokens: (prompt) => this.promptTokens(prompt),
      pick: (tokens) => this.prefixes.pick(tokens),
    };
  }

  /**
   * Creates the scorer's context and checks that the model can read option letters.
   *
   * @example
   * const scorer = await DecisionScorer.create(model);
   * const request = parseSystemOneRequest({ state: "charged twice", questions: {...} }, { tokenMass: true });
   * const result = await scorer.score(request);
   */
  static async create(model: DecisionModel, options: ScorerOptions = {}): Promise<DecisionScorer> {
    const contextSize = options.contextSize ?? Math.min(4096, model.trainContextSize);
    const wrapper = resolveChatWrapper(model.model) ?? new GeneralChatWrapper();
    const probe = renderPrompt(wrapper, { system: "probe", user: "probe" });
    const slots = checkLetterSlots(model.model, probe, model.path);
    // One context per prefix slot, not one context of several sequences: llama.cpp evaluated
    // every token about 7 percent slower in a context of 3 sequences, even on the first sequence
    // alone, than in a context of one (docs/benchmarks.md); a context of its own costs its compute
    // buffer, about 36 MiB more a slot at Qwen2-0.5B's shape.
    const contexts: LlamaContext[] = [];
    const count = await prefixSlotCount(model, contextSize, options);
    try {
      for (let i = 0; i < count; i++)
        contexts.push(
          await model.model.createContext({
            contextSize,
            batchSize: options.batchSize ?? Math.min(512, contextSize),
            threads: model.threads,
            flashAttention: options.flashAttention ?? false,
            sequences: 1,
          }),
        );
    } catch (error) {
      await Promise.all(contexts.map((context) => context.dispose()));
      throw error;
    }
    return new DecisionScorer(model, contexts, wrapper, slots, options.maxQueue ?? Number.POSITIVE_INFINITY);
  }

  /** Tokens one prompt may use. */
  get contextSize(): number {
    return this.prefixes.first.contextSize;
  }

  /** The option letters' tokens at the answer position, in letter order (for benchmarks and tests). */
  get letterTokens(): readonly Token[] {
    return this.passContext.slots.tokens;
  }

  /** Prefix slots, hits and misses since start. */
  get cacheStats(): SlotStats {
    return this.prefixes.stats();
  }

  /**
   * Scores a validated decision (`parseSystemOneRequest` validated it where it came in; nothing
   * is checked twice); concurrent calls wait their turn.
   */
  async score(request: DecisionRequest, options: ScoreOptions = {}): Promise<DecisionResult> {
    return this.work.run(
      () => this.scoreNow(request, options),
      eitherSignal(options.signal, options.queueSignal),
      options.priority,
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

  /**
   * The tokens of one question's prompt, as the scorer evaluates them: the head its user message
   * shares with the prompts before is tokenized once where that is exact (`prompt-tokens.ts`).
   */
  promptTokens(prompt: PromptMessages): Token[] {
    return this.tokenizer.tokens(prompt);
  }

  /** How prompts are tokenized: whether the shared head is kept, and how often it was. */
  get promptTokenizer(): Pick<PromptTokenizer, "cuts" | "reusedHeads"> {
    return this.tokenizer;
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
      answers.push(await this.scoreQuestion(request, question, options.reuse !== false));
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
    reuse: boolean,
  ): Promise<QuestionResult> {
    const t0 = performance.now();
    const passes = optionPasses(
      question.options.map((option) => option.id),
      question.option_order,
    );
    const results: PassResult[] = [];
    for (const pass of passes) {
      const shown = { ...question, options: pass.map((i) => question.options[i]!) };
      results.push(await scorePass(this.passContext, request, shown, reuse));
    }
    return readQuestion(question, passes, results, { startedAt: t0, evaluatedAt: performance.now() });
  }

  /** Frees the contexts (the model stays loaded); safe to call twice. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.work.drain();
    await Promise.all(this.contexts.map((context) => context.dispose()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

/** Renders system and user messages with the model's chat template, ending at the answer position. */
/** A signal that aborts when either does (undefined when neither is given). */
function eitherSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}
