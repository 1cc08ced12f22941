/**
 * What every request goes through before a route: its id (echoed back), the refusal once
 * shutdown has begun, one log line, the body limit, and reading a JSON body.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { duplicateKeyError, parseJsonDocumentInSlices } from "../../shared/domain/contracts/json.ts";
import { ApiError, invalidField } from "./api-error.ts";
import { batchDocument, type Invocation } from "./batch.ts";
import { errorResponse } from "./responses.ts";

/** Per-request values routes share. */
export type AppEnv = { Variables: { requestId: string } };

/** Sets the request id, refuses requests during shutdown, and logs each request once. */
export function requestContext(logger: Logger, isShuttingDown: () => boolean): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    const requestId = c.req.header("x-request-id") ?? c.req.header("x-amzn-requestid") ?? randomUUID();
    c.set("requestId", requestId);
    const started = performance.now();
    if (isShuttingDown()) {
      const refused = errorResponse(
        c,
        new ApiError(503, "overloaded_error", "shutting_down", "the server is shutting down", undefined, 1),
      );
      refused.headers.set("connection", "close");
      refused.headers.set("x-request-id", requestId);
      logger.info("request refused: shutting down", { requestId, method: c.req.method, path: c.req.path });
      return refused;
    }
    await next();
    c.header("x-request-id", requestId);
    logger.info("request", {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
    });
  };
}

/** Refuses a body past `maxSize` bytes with 413, before it is read. */
export function bodyLimitOf(maxSize: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize,
    onError: (c) =>
      errorResponse(
        c,
        new ApiError(413, "request_too_large", "body_too_large", `the body exceeds ${maxSize} bytes`),
      ),
  });
}

/** Lets the event loop answer what waits (a /ping) between slices of a large body's scan. */
const letOthersIn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Reads a JSON body: checks the content type and refuses malformed JSON and duplicate keys. */
export async function readJson(c: Context): Promise<unknown> {
  checkJsonType(c);
  const { value, duplicates } = await parseJsonDocumentInSlices(await c.req.text(), letOthersIn);
  if (duplicates[0]) throw duplicateKeyError(duplicates[0]);
  return value;
}

/** A SageMaker invocation's body: a batch's items refused while parsing (a repeated key) answer alone. */
export async function readInvocation(c: Context): Promise<Invocation> {
  checkJsonType(c);
  return batchDocument(await parseJsonDocumentInSlices(await c.req.text(), letOthersIn));
}

function checkJsonType(c: Context): void {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type.trim())) {
    throw invalidField(
      "content-type",
      `content-type must be application/json, got "${type || "none"}"`,
      "unsupported_content_type",
    );
  }
}

/** Parses `X-Amzn-SageMaker-Custom-Attributes` (`key=value;key=value`). */
export function customAttributes(header: string | undefined): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const pair of (header ?? "").split(";")) {
    const [key, value] = pair.split("=").map((part) => part.trim());
    if (key && value !== undefined) attributes.set(key.toLowerCase(), value.toLowerCase());
  }
  return attributes;
}
