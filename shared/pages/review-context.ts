/**
 * What every review page handler shares: its dependencies, the Hono environment that carries the
 * signed-in reviewer, the error page, and reading an item's key from its path.
 */
import type { Context } from "hono";
import type { RecordKey } from "../domain/decision-store.ts";
import type { Reviewer } from "../domain/review/review.ts";
import type { ReviewDependencies } from "../use-cases/review/review-decision.ts";
import { html, page } from "./layout.ts";
import type { Identify } from "./session.ts";

/** What the review pages need: the review use cases' dependencies and who is asking. */
export interface ReviewAppDependencies extends ReviewDependencies {
  readonly identify: Identify;
  /** Items per queue page. */
  readonly pageSize: number;
}

/** The Hono environment of the review pages: the signed-in reviewer. */
export type ReviewEnv = { Variables: { reviewer: Reviewer } };

/** An error page with the status to answer with. */
export function failPage(
  c: Context<ReviewEnv>,
  status: 401 | 403 | 404 | 409 | 422,
  message: string,
): Response | Promise<Response> {
  return c.html(
    page(
      "Cannot do that",
      `<p class="error" role="alert">${html(message)}</p><p><a href="/">Back to the queue</a></p>`,
      c.get("reviewer"),
    ),
    status,
  );
}

/** The record key in an item path's parameters, or a message saying what is wrong. */
export function keyOf(c: Context<ReviewEnv>): RecordKey | string {
  const version = Number(c.req.param("version"));
  if (!Number.isInteger(version) || version < 1)
    return `version: "${c.req.param("version")}" is not a policy version`;
  return { policyId: c.req.param("policyId")!, policyVersion: version, itemId: c.req.param("itemId")! };
}
