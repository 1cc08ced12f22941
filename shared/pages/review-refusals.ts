/**
 * The one place a refused review becomes an HTTP answer: each kind of refusal (`ReviewError`) its
 * status, for the review pages (one `onError` on their app, an error page) and the review API
 * (`functions/review.ts`, a JSON error). The use cases say why; only this layer speaks HTTP.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ReviewError, type ReviewRefusal } from "../use-cases/review/review-common.ts";
import { failPage, type ReviewEnv } from "./review-context.ts";

/** The HTTP status of each kind of refusal. */
export const REVIEW_REFUSAL_STATUS = {
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
} as const satisfies Record<ReviewRefusal, number>;

/**
 * The review pages' error handler: a refused review is an error page with its status; anything
 * else answers as Hono's own handler does (an HTTPException its response, else a logged 500).
 */
export function reviewErrorPage(error: Error, c: Context<ReviewEnv>): Response | Promise<Response> {
  if (error instanceof ReviewError) return failPage(c, REVIEW_REFUSAL_STATUS[error.kind], error.message);
  if (error instanceof HTTPException) return error.getResponse();
  console.error(error);
  return c.text("Internal Server Error", 500);
}
