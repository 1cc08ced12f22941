/**
 * Text generation for OpenAI-compatible chat: the conversation rendered with the model's chat
 * template, tokens sampled one by one on the scorer's sequence (so one model serves decisions
 * and chat, queued together), stop sequences, a token limit, and per-token log-probabilities.
 */
import type { ChatHistoryItem, Token } from "node-llama-cpp";
import { PromptTooLongError } from "../runtime/errors.ts";
import { TaskAbortedError } from "../runtime/work-queue.ts";
import type { DecisionScorer } from "../scorer/scorer.ts";
import { type ChatMessage, messageText } from "./chat-request.ts";

/** Options of one generation. */
export interface GenerationOptions {
  /** 0 means greedy. */
  readonly temperature: number;
  readonly topP: number;
  /** Most tokens to generate; capped by the room left in the context. */
  readonly maxTokens: number | undefined;
  readonly stop: readonly string[];
  readonly seed: number | undefined;
  /** Alternatives to report per token, or undefined for no log-probabilities. */
  readonly topLogprobs: number | undefined;
  readonly signal?: AbortSignal;
  /** Stops only the wait for the model (shutdown refuses queued requests). */
  readonly queueSignal?: AbortSignal;
  /** Called with each new piece of text as soon as it is final (never part of a stop sequence). */
  readonly onText?: (text: string, logprobs: readonly TokenLogprob[]) => void;
}

/** One alternative token with its log-probability. */
export interface TopLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
}

/** A generated token with its log-probability and the most likely alternatives. */
export interface TokenLogprob extends TopLogprob {
  readonly top_logprobs: TopLogprob[];
}

/** What was generated. */
export interface Generation {
  readonly text: string;
  readonly finishReason: "stop" | "length";
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly logprobs: readonly TokenLogprob[] | undefined;
}

function toHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((message): ChatHistoryItem => {
    const text = messageText(message);
    if (message.role === "assistant") return { type: "model", response: [text] };
    if (message.role === "user") return { type: "user", text };
    return { type: "system", text };
  });
  history.push({ type: "model", response: [] });
  return history;
}

/** Smallest log-probability reported, for tokens whose probability underflowed. */
const LOGPROB_FLOOR = -9999;

/**
 * Generates the assistant's reply to `messages`.
 *
 * Log-probabilities come from the sampler's distribution at each step (after temperature and
 * top_p): with temperature 0 they are the model's raw distribution over the whole vocabulary.
 */
export async function generateChat(
  scorer: DecisionScorer,
  messages: readonly ChatMessage[],
  options: GenerationOptions,
): Promise<Generation> {
  const model = scorer.model.model;
  const contextText = scorer.chatWrapper.generateContextState({
    chatHistory: toHistory(messages),
  }).contextText;
  const promptTokens = contextText.tokenize(model.tokenizer);
  const room = scorer.contextSize - promptTokens.length;
  if (room < 1) throw new PromptTooLongError("messages", promptTokens.length + 1, scorer.contextSize);
  const maxTokens = Math.min(options.maxTokens ?? room, room);
  const wantLogprobs = options.topLogprobs !== undefined;
  const holdBack = Math.max(0, ...options.stop.map((stop) => stop.length - 1));

  return scorer.withSequence(
    promptTokens,
    async (sequence) => {
      const generated: Token[] = [];
      const logprobs: TokenLogprob[] = [];
      let emittedText = 0;
      let emittedLogprobs = 0;
      let text = "";
      let finishReason: Generation["finishReason"] = "stop";
      const flush = (upTo: number) => {
        if (upTo > emittedText) {
          options.onText?.(text.slice(emittedText, upTo), logprobs.slice(emittedLogprobs));
          emittedText = upTo;
          emittedLogprobs = logprobs.length;
        }
      };
      const sampling = {
        temperature: options.temperature,
        topP: options.topP,
        topK: 0,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
      };
      for await (const step of sequence.generate(promptTokens, sampling, wantLogprobs)) {
        if (options.signal?.aborted) {
          throw new TaskAbortedError(`stopped after ${generated.length} tokens`, {
            cause: options.signal.reason,
          });
        }
        generated.push(step.token);
        if (wantLogprobs && step.probabilities)
          logprobs.push(logprobOf(model, step.token, step.probabilities, options.topLogprobs!));
        text = model.detokenize(generated);
        const stopAt = firstStop(text, options.stop, Math.max(0, emittedText - holdBack));
        if (stopAt >= 0) {
          text = text.slice(0, stopAt);
          break;
        }
        // An incomplete multi-byte character detokenizes to U+FFFD: wait for its next byte.
        const safe = text.endsWith("\uFFFD") ? text.length - 1 : text.length;
        flush(Math.max(emittedText, safe - holdBack));
        if (generated.length >= maxTokens) {
          finishReason = "length";
          break;
        }
      }
      flush(text.length);
      return {
        text,
        finishReason,
        promptTokens: promptTokens.length,
        completionTokens: generated.length,
        logprobs: wantLogprobs ? logprobs : undefined,
      };
    },
    options.signal,
    options.queueSignal,
  );
}

function firstStop(text: string, stops: readonly string[], from: number): number {
  let first = -1;
  for (const stop of stops) {
    if (!stop) continue;
    const at = text.indexOf(stop, from);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}

function logprobOf(
  model: DecisionScorer["model"]["model"],
  token: Token,
  probabilities: ReadonlyMap<Token, number>,
  top: number,
): TokenLogprob {
  const entry = (t: Token, p: number): TopLogprob => {
    const piece = model.detokenize([t], true);
    return {
      token: piece,
      logprob: p > 0 ? Math.log(p) : LOGPROB_FLOOR,
      bytes: [...Buffer.from(piece, "utf8")],
    };
  };
  const alternatives: TopLogprob[] = [];
  // llama.cpp returns candidates sorted by logit, most likely first.
  for (const [t, p] of probabilities) {
    if (alternatives.length >= top) break;
    alternatives.push(entry(t, p));
  }
  return { ...entry(token, probabilities.get(token) ?? 0), top_logprobs: alternatives };
}
