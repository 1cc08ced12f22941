/**
 * The review pages (the same app the local mode serves) behind the HTTP API, whose Lambda
 * authorizer has verified the reviewer's Cognito token: the queue, the item pages with claims and
 * answers, and the decisions view. The reviewer is read from the authorizer's context only.
 */
import { handle } from "hono/aws-lambda";
import { reviewerFromAuthorizer } from "../shared/adapters/review-tokens.ts";
import { createReviewApp } from "../shared/pages/review-page.ts";
import { reviewSettings } from "./support/config.ts";
import { sharedDependencies, withBatches } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const app = lazy(async () =>
  createReviewApp({
    ...(await sharedDependencies()),
    ...withBatches(),
    ...reviewSettings(),
    identify: async (c) => reviewerFromAuthorizer(c.env?.event),
  }),
);

/** The Lambda entry point (API Gateway HTTP API events, after the authorizer). */
export async function handler(
  event: Parameters<ReturnType<typeof handle>>[0],
  context: Parameters<ReturnType<typeof handle>>[1],
) {
  const resolved = await app();
  if (!tracer.isTracingEnabled()) return handle(resolved)(event, context);
  // One traced subsegment per request (the SDK calls inside it are traced by the clients).
  return tracer.provider.captureAsyncFunc("## review page", async (segment) => {
    try {
      return await handle(resolved)(event, context);
    } finally {
      segment?.close();
    }
  });
}
