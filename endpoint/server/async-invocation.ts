/**
 * An asynchronous invocation on `/invocations`: what SageMaker Asynchronous Inference sends the
 * container when an object in S3 holds many items. The body is JSONL (`application/jsonlines`),
 * one System One request per line, from 64 KB to the 1 GB an async request may carry; the answer
 * is JSONL too, one line per item in the same order: `{"status": 200, "body": <response>}` or the
 * item's own error (`{"status": 422, "body": {"error": ...}}`), never an error for the whole object
 * once the first line is read. Blank lines are not items and get no answer line.
 *
 * Each answer line also says what it answers, so the reader matches answers to items by identity
 * rather than by position: `x_request_sha256`, the SHA-256 of the request line's UTF-8 text as it
 * was read (what was scored), and `x_item`, echoed as it came when the request line names one (the
 * async lane writes `{"id", "n"}` there; the field is taken off before the System One request is
 * read, whose fields are otherwise strict).
 *
 * Lines are read, scored and written one at a time, and the next line is read only when the
 * answer before it has been taken by the reader (a pull stream): memory stays flat whatever the
 * object's size. Items wait behind live requests (the `priority=batch` SageMaker passes through),
 * are never refused for a full admission queue (an object's item waits its turn instead: the
 * object is the queue), and have no per-request deadline: the async invocation's own timeout is
 * the bound. Items of one policy follow each other, so the policy's preamble is evaluated once
 * per object and reused from the prefix cache (`x_detail.reused_tokens`).
 *
 * Real-time requests (`application/json`) keep their body limit, admission and deadline.
 */
import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { parseJsonStrict, stringifyJson } from "../../shared/domain/contracts/json.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import { QueueFullError } from "../runtime/work-queue.ts";
import type { Answers } from "./answers.ts";
import { ApiError, toApiError } from "./api-error.ts";
import type { AppEnv } from "./request-context.ts";

/** Content types of an asynchronous invocation's body. */
const JSONL_TYPES = /^application\/(jsonlines|jsonl|x-ndjson|x-jsonlines)\b/i;

/** How long an item waits before asking again when live requests fill the admission queue. */
const QUEUE_FULL_WAIT_MS = 50;

/** Whether a request's body is JSONL (an asynchronous invocation). */
export function isJsonLines(c: Context): boolean {
  return JSONL_TYPES.test((c.req.header("content-type") ?? "").trim());
}

/** What an answer line says it answers: the request line's hash, and the item the request named. */
interface AnswerIdentity {
  readonly x_item?: unknown;
  readonly x_request_sha256?: string;
}

/** One answer line. */
function line(status: number, body: unknown, identity: AnswerIdentity = {}): Uint8Array {
  return new TextEncoder().encode(`${stringifyJson({ status, body, ...identity })}\n`);
}

/** The request a line holds, without its `x_item`, and the identity its answer carries. */
function requestOf(text: string, x_request_sha256: string): { request: unknown; identity: AnswerIdentity } {
  // Parsed strictly (duplicate keys refused) by the same reader as a single call.
  const value = parseJsonStrict(text);
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Object.hasOwn(value, "x_item"))
    return { request: value, identity: { x_request_sha256 } };
  const { x_item, ...request } = value as Record<string, unknown>;
  return { request, identity: { x_item, x_request_sha256 } };
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

/** Scores one item's request text, waiting its turn while live requests fill the admission queue. */
async function answerOf(
  c: Context<AppEnv>,
  answers: Answers,
  text: string,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const hash = createHash("sha256").update(text, "utf8").digest("hex");
  let identity: AnswerIdentity = { x_request_sha256: hash };
  for (;;) {
    try {
      const read = requestOf(text, hash);
      identity = read.identity;
      return line(200, await answers.systemOne(c, read.request, signal), identity);
    } catch (error) {
      if (error instanceof QueueFullError && !signal.aborted) {
        await pause(QUEUE_FULL_WAIT_MS, signal);
        continue;
      }
      const api = toApiError(error);
      return line(api.status, api.body(), identity);
    }
  }
}

/**
 * Answers a JSONL invocation and ends the chain; any other request goes on (to the body limit and
 * the JSON routes). `maxLineBytes`: the longest item line (the real-time body limit).
 */
export function asyncJsonLines(answers: Answers, maxLineBytes: number): MiddlewareHandler<AppEnv> {
  return async function asyncJsonLines(c, next) {
    if (!isJsonLines(c)) return next();
    answers.ready(); // a model that is loading or failed answers the whole object, which is retried
    const body = c.req.raw.body;
    if (!body) throw new ApiError(422, "invalid_request_error", "empty_body", "the object holds no items");
    const signal = c.req.raw.signal;
    const lines = readLines(body as unknown as AsyncIterable<Uint8Array>, { maxLineBytes });
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          for (;;) {
            const next = await lines.next();
            if (next.done) return controller.close();
            const read = next.value;
            if (read.error !== undefined) {
              const status = read.error.includes("over the limit") ? 413 : 422;
              const code = status === 413 ? "line_too_large" : "invalid_line";
              const api = new ApiError(
                status,
                "invalid_request_error",
                code,
                `line ${read.line} ${read.error}`,
              );
              return controller.enqueue(line(api.status, api.body()));
            }
            if (read.text.trim() === "") continue;
            return controller.enqueue(await answerOf(c, answers, read.text, signal));
          }
        },
        async cancel() {
          await lines.return(undefined);
        },
      },
      { highWaterMark: 1 },
    );
    return c.body(stream, 200, { "content-type": "application/jsonlines" });
  };
}
