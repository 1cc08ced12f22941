/**
 * `POST /v1/chat/completions`: OpenAI's request and response shapes, non-streaming and SSE
 * streaming (chunks, then an optional usage chunk, then `[DONE]`).
 */
import { randomUUID } from "node:crypto";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { stringifyJson } from "../../shared/domain/contracts/json.ts";
import { type ChatRequest, chatRequestSchema } from "../chat/chat-request.ts";
import { type GenerationOptions, generateChat, type TokenLogprob } from "../chat/generate.ts";
import type { DecisionScorer } from "../scorer/scorer.ts";
import { invalidField, toApiError } from "./api-error.ts";
import { jsonResponse } from "./responses.ts";

/** What the chat route needs from the app. */
export interface ChatRouteContext {
  /** The served model a request's `model` names; throws the answer for a name not served. */
  readonly modelFor: (requested: string | undefined) => {
    readonly name: string;
    readonly scorer: DecisionScorer;
  };
  readonly signal: AbortSignal;
  /** Aborts on shutdown: refuses a queued request, ends a running stream with an error chunk. */
  readonly shutdownSignal: AbortSignal;
}

function parseChatRequest(body: unknown): ChatRequest {
  const parsed = chatRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = issue.path.map(String).join(".") || undefined;
    throw invalidField(param, `${param ?? "request"}: ${issue.message}`);
  }
  return parsed.data;
}

function generationOptions(
  request: ChatRequest,
  signal: AbortSignal,
  queueSignal: AbortSignal,
): Omit<GenerationOptions, "onText"> {
  const stop = request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : request.stop;
  const wantLogprobs = request.logprobs === true;
  if (!wantLogprobs && request.top_logprobs) {
    throw invalidField("top_logprobs", "top_logprobs: needs logprobs set to true");
  }
  return {
    temperature: request.temperature,
    topP: request.top_p,
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    stop,
    seed: request.seed ?? undefined,
    topLogprobs: wantLogprobs ? (request.top_logprobs ?? 0) : undefined,
    signal,
    queueSignal,
  };
}

/** The fields every completion and every chunk of one answer share. */
interface CompletionBase {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly system_fingerprint: string;
}

/** Answers one chat completion request. */
export async function handleChat(c: Context, body: unknown, route: ChatRouteContext): Promise<Response> {
  const request = parseChatRequest(body);
  const served = route.modelFor(request.model);
  const options = generationOptions(request, route.signal, route.shutdownSignal);
  const base: CompletionBase = {
    id: `chatcmpl-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: served.name,
    system_fingerprint: `decide-${served.scorer.model.sha256.slice(0, 12)}`,
  };
  return request.stream
    ? streamChat(c, request, options, base, served.scorer, route)
    : completeChat(c, request, options, base, served.scorer);
}

/** One `chat.completion` body once the generation is done. */
async function completeChat(
  c: Context,
  request: ChatRequest,
  options: Omit<GenerationOptions, "onText">,
  base: CompletionBase,
  scorer: DecisionScorer,
): Promise<Response> {
  const generation = await generateChat(scorer, request.messages, options);
  return jsonResponse(c, {
    ...base,
    object: "chat.completion",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: generation.text, refusal: null },
        logprobs: generation.logprobs ? { content: generation.logprobs, refusal: null } : null,
        finish_reason: generation.finishReason,
      },
    ],
    usage: usageOf(generation.promptTokens, generation.completionTokens),
  });
}

/** `chat.completion.chunk` events as the text comes, an optional usage chunk, then `[DONE]`. */
function streamChat(
  c: Context,
  request: ChatRequest,
  options: Omit<GenerationOptions, "onText">,
  base: CompletionBase,
  scorer: DecisionScorer,
  route: ChatRouteContext,
): Response {
  const includeUsage = request.stream_options?.include_usage === true;
  return streamSSE(c, async (stream) => {
    const abort = new AbortController();
    stream.onAbort(() => abort.abort(new Error("the client disconnected")));
    const chunk = (
      delta: Record<string, unknown>,
      finish: string | null,
      logprobs?: readonly TokenLogprob[],
    ) =>
      stream.writeSSE({
        data: stringifyJson({
          ...base,
          object: "chat.completion.chunk",
          choices: [
            {
              index: 0,
              delta,
              logprobs: logprobs ? { content: logprobs, refusal: null } : null,
              finish_reason: finish,
            },
          ],
          ...(includeUsage ? { usage: null } : {}),
        }),
      });
    let pending: Promise<unknown> = chunk({ role: "assistant", content: "" }, null);
    try {
      const generation = await generateChat(scorer, request.messages, {
        ...options,
        // A stream stops on shutdown too, and ends with an error chunk and [DONE].
        signal: AbortSignal.any([route.signal, abort.signal, route.shutdownSignal]),
        onText: (text, logprobs) => {
          pending = pending.then(() =>
            chunk({ content: text }, null, options.topLogprobs === undefined ? undefined : logprobs),
          );
        },
      });
      await pending;
      await chunk({}, generation.finishReason);
      if (includeUsage) {
        await stream.writeSSE({
          data: stringifyJson({
            ...base,
            object: "chat.completion.chunk",
            choices: [],
            usage: usageOf(generation.promptTokens, generation.completionTokens),
          }),
        });
      }
    } catch (error) {
      await pending.catch(() => undefined);
      if (!abort.signal.aborted) await stream.writeSSE({ data: stringifyJson(toApiError(error).body()) });
    }
    if (!abort.signal.aborted) await stream.writeSSE({ data: "[DONE]" });
  });
}

function usageOf(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
