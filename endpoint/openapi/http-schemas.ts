/**
 * The shapes the endpoint answers with beyond the System One contract (which has its own module):
 * OpenAI's chat completion and its stream chunks, the model list, `/healthz`, error bodies, the
 * batched invocation and SageMaker's ModelError. They describe what the routes write, for the
 * OpenAPI page (`openapi.ts`); `test/integration/openapi.test.ts` checks real answers of each
 * route against them, so a route that changes its answer fails there.
 */
import { z } from "zod";
import {
  systemOneRequestShape,
  systemOneResponseSchema,
} from "../../shared/domain/contracts/system-one/index.ts";
import { MAX_BATCH_ITEMS } from "../server/batch.ts";

const count = z.number().int().nonnegative();

/** `{"error": {...}}`: every error the endpoint answers itself. */
export const errorBodySchema = z.object({
  error: z.object({
    type: z
      .string()
      .describe(
        "invalid_request_error, not_found_error, request_too_large, overloaded_error, timeout_error, model_error or api_error",
      ),
    code: z.string(),
    message: z.string(),
    param: z
      .string()
      .optional()
      .describe("the field at fault, as System One names it (questions.team.criteria)"),
  }),
});

const topLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number().int()) });
const tokenLogprob = topLogprob.extend({ top_logprobs: z.array(topLogprob) });
const logprobs = z.object({ content: z.array(tokenLogprob), refusal: z.null() }).nullable();
const usage = z.object({ prompt_tokens: count, completion_tokens: count, total_tokens: count });
const completionBase = z.object({
  id: z.string(),
  created: count,
  model: z.string(),
  system_fingerprint: z.string(),
});

/** A `chat.completion` (non-streaming). */
export const chatCompletionSchema = completionBase.extend({
  object: z.literal("chat.completion"),
  choices: z.array(
    z.object({
      index: count,
      message: z.object({ role: z.literal("assistant"), content: z.string(), refusal: z.null() }),
      logprobs,
      finish_reason: z.enum(["stop", "length"]),
    }),
  ),
  usage,
});

/** One `data:` event of a streamed answer (the stream ends with `data: [DONE]`). */
export const chatCompletionChunkSchema = completionBase.extend({
  object: z.literal("chat.completion.chunk"),
  choices: z.array(
    z.object({
      index: count,
      delta: z.object({ role: z.literal("assistant").optional(), content: z.string().optional() }),
      logprobs,
      finish_reason: z.enum(["stop", "length"]).nullable(),
    }),
  ),
  usage: usage
    .nullable()
    .optional()
    .describe("with stream_options.include_usage: null, then a last chunk with it"),
});

/** `GET /v1/models`: OpenAI's list (`data`) and System One's (`models`) in one body. */
export const modelListSchema = z.object({
  object: z.literal("list"),
  data: z.array(
    z.object({ id: z.string(), object: z.literal("model"), created: count, owned_by: z.string() }),
  ),
  models: z.array(
    z.object({ name: z.string(), aliases: z.array(z.string()), any_name_accepted: z.boolean() }),
  ),
});

const servedModel = z.object({
  name: z.string(),
  file: z.string(),
  sha256: z.string().optional(),
  bytes: count.optional(),
});
const queue = z.object({ waiting: count, running: z.boolean(), limit: count });
const prefixCache = z.object({ slots: count, hits: count, misses: count, reused_tokens: count });

/** `GET /healthz`: the models' state and the server's settings and queue. */
export const healthSchema = z.object({
  status: z.enum(["loading", "ready", "failed", "stopping"]),
  reason: z.string().optional().describe("why a model failed to load"),
  model: servedModel.nullable().describe("the first model (the one a request without `model` gets)"),
  threads: count,
  context_size: count,
  gpu: z.object({
    requested: z.enum(["auto", "cuda", "off"]),
    active: z
      .union([z.string(), z.literal(false), z.null()])
      .describe("the backend (cuda), false for CPU, null while loading"),
    note: z.string().optional(),
  }),
  queue: queue.describe("the first model's"),
  prefix_cache: prefixCache.nullable().describe("the first model's"),
  models: z
    .array(servedModel.extend({ queue, prefix_cache: prefixCache }))
    .describe("every model loaded so far, each with its own queue and prefix cache (--extra-model)"),
  uptime_s: count,
});

/** `POST /invocations` with several items: what the decide function sends for one SQS batch. */
export const batchInvocationSchema = z.object({
  batch: z.array(systemOneRequestShape).min(1).max(MAX_BATCH_ITEMS),
});

/** The answer to a batched invocation: one status and body per item, in the request's order. */
export const batchAnswerSchema = z.object({
  results: z.array(
    z.union([
      z.object({ status: z.literal(200), body: systemOneResponseSchema }),
      z.object({ status: z.number().int().min(400), body: errorBodySchema }),
    ]),
  ),
});

/** What the SageMaker runtime path answers when the container fails (HTTP 424, `x-amzn-errortype: ModelError`). */
export const modelErrorSchema = z.object({
  __type: z.literal("ModelError"),
  message: z.string(),
  ErrorCode: z.enum(["CLIENT_ERROR_FROM_MODEL", "SERVER_ERROR_FROM_MODEL"]),
  OriginalStatusCode: z.number().int(),
  OriginalMessage: z.string().describe("the container's own answer, as text"),
});
