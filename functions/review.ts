/**
 * The review function, behind an HTTP API: `GET /reviews` lists items pending review (the review
 * queue) and `POST /reviews` stores a reviewer's answer as the label, once.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { ReviewError, reviewDecision } from "../shared/use-cases/review-decision.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";
import { tracer } from "./tracing.ts";

const logger = new Logger({ serviceName: "review" });

const reviewSchema = z
  .object({
    itemId: z.string().min(1),
    policyId: z.string().min(1),
    policyVersion: z.number().int().min(1),
    label: z.string().min(1),
    reviewer: z.string().min(1),
  })
  .strict();

function json(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

function error(
  statusCode: number,
  code: string,
  message: string,
  param?: string,
): APIGatewayProxyStructuredResultV2 {
  return json(statusCode, {
    error: {
      type: statusCode === 422 ? "invalid_request_error" : "api_error",
      code,
      message,
      ...(param ? { param } : {}),
    },
  });
}

/** The handler for given dependencies. */
export function createReviewHandler(dependencies: () => Promise<SharedDependencies>) {
  let resolved: Promise<SharedDependencies> | undefined;
  async function lambdaHandler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
    resolved ??= dependencies();
    const deps = await resolved;
    const method = event.requestContext.http.method;
    if (method === "GET") {
      const limit = Math.min(Number(event.queryStringParameters?.limit ?? 50) || 50, 500);
      return json(200, { items: await deps.store.listByStatus("pending_review", limit) });
    }
    if (method !== "POST") return error(405, "method_not_allowed", `${method} is not supported`);
    let body: unknown;
    try {
      body = JSON.parse(event.body ?? "");
    } catch {
      return error(422, "invalid_json", "the body is not valid JSON");
    }
    const parsed = reviewSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return error(
        422,
        "invalid_value",
        `${issue.path.join(".") || "body"}: ${issue.message}`,
        issue.path.join(".") || undefined,
      );
    }
    try {
      const outcome = await reviewDecision(parsed.data, deps);
      logger.info("review", { itemId: parsed.data.itemId, stored: outcome.stored });
      return json(outcome.stored ? 201 : 200, { stored: outcome.stored, record: outcome.record });
    } catch (e) {
      if (e instanceof ReviewError) return error(e.status, "review_refused", e.message);
      throw e;
    }
  }
  return middy(lambdaHandler).use(captureLambdaHandler(tracer)).use(injectLambdaContext(logger));
}

/** The Lambda entry point. */
export const handler = createReviewHandler(() => sharedDependencies());
