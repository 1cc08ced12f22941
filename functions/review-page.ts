/**
 * The review page (the same app the local mode serves) behind a Lambda function URL: the queue of
 * escalated items, answers by click or number key, and the decisions view.
 */
import type { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { createReviewApp } from "../shared/pages/review-page.ts";
import { sharedDependencies } from "./dependencies.ts";
import { tracer } from "./tracing.ts";

let app: Promise<Hono> | undefined;

/** The Lambda entry point (function URL or API Gateway HTTP API events). */
export async function handler(
  event: Parameters<ReturnType<typeof handle>>[0],
  context: Parameters<ReturnType<typeof handle>>[1],
) {
  app ??= sharedDependencies().then(createReviewApp);
  const resolved = await app;
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
