/**
 * Response builders shared by the routes: JSON with floats kept as floats, and error bodies.
 */
import type { Context } from "hono";
import { stringifyJson } from "../../shared/domain/contracts/json.ts";
import type { ApiError } from "./api-error.ts";

/** A JSON response with floats kept as floats. */
export function jsonResponse(c: Context, body: unknown, status = 200): Response {
  return c.body(stringifyJson(body), status as 200, { "content-type": "application/json" });
}

/** An error response; adds `Retry-After` where the client should come back. */
export function errorResponse(c: Context, error: ApiError): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  return c.body(stringifyJson(error.body()), error.status as 400, headers);
}
