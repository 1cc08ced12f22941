/**
 * The review API for scripts, behind the HTTP API and its authorizer (bearer ID token):
 * `GET /api/reviews` lists a page of items pending review with the total, and `POST /api/reviews`
 * labels, changes or undoes a label, or marks the item a near-duplicate of another (`duplicate`
 * with `of`: the review page's action, `mark-duplicate.ts`, with its refusals). The reviewer is the
 * token's, from the authorizer context; a body that names a reviewer is refused.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { z } from "zod";
import { reviewerFromAuthorizer } from "../shared/adapters/review-tokens.ts";
import { REVIEW } from "../shared/domain/topology.ts";
import { REVIEW_REFUSAL_STATUS } from "../shared/pages/review-refusals.ts";
import { viewedBy } from "../shared/use-cases/review/gold-items.ts";
import { markDuplicate } from "../shared/use-cases/review/mark-duplicate.ts";
import { labelItem, ReviewError, reviseLabel } from "../shared/use-cases/review/review-decision.ts";
import { reviewSettings } from "./support/config.ts";
import { type SharedDependencies, sharedDependencies, withBatches } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: "review" });

const reviewSchema = z
  .object({
    itemId: z.string().min(1),
    policyId: z.string().min(1),
    policyVersion: z.number().int().min(1),
    /** The label; omitted for an undo and a duplicate. */
    label: z.string().min(1).optional(),
    /** With `duplicate`: the item (same policy version) this one is a near-duplicate of. */
    of: z.string().trim().min(1, "name the item this one duplicates").optional(),
    action: z.enum(["label", "change", "undo", "duplicate"]).default("label"),
  })
  .strict()
  .superRefine((body, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (body.action === "duplicate") {
      if (body.of === undefined)
        issue("of", "of is required when action is duplicate: the item this one duplicates");
      if (body.label !== undefined)
        issue("label", "label is not taken with action duplicate: it marks, it does not label");
    } else {
      if (body.of !== undefined) issue("of", `of is taken only with action duplicate, not ${body.action}`);
      if (body.action !== "undo" && body.label === undefined)
        issue("label", "label is required unless action is undo");
    }
  });

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

/** The handler for given dependencies; batches and review settings read from `env`. */
export function createReviewHandler(
  dependencies: () => Promise<SharedDependencies>,
  env: NodeJS.ProcessEnv = process.env,
) {
  const resolved = lazy(async () => ({
    ...(await dependencies()),
    ...withBatches(env),
    ...reviewSettings(env),
  }));
  async function lambdaHandler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
    const deps = await resolved();
    const reviewer = reviewerFromAuthorizer(event);
    if (!reviewer) return error(401, "unauthenticated", "no verified reviewer on this request");
    const method = event.requestContext.http.method;
    if (method === "GET") {
      const raw = event.queryStringParameters?.limit ?? "50";
      const limit = Number(raw);
      if (!Number.isInteger(limit) || limit < 1 || limit > 500)
        return error(422, "invalid_value", `limit: "${raw}" is not a whole number from 1 to 500`, "limit");
      const cursor = event.queryStringParameters?.cursor;
      try {
        const page = await deps.store.pageReviewQueue({
          policyIds: deps.policies.ids(),
          limit,
          countCap: REVIEW.queueCountCap,
          ...(cursor ? { cursor } : {}),
        });
        return json(200, {
          items: page.records.map((r) => viewedBy(r, reviewer)),
          total: page.total,
          ...(page.capped ? { capped: true } : {}),
          ...(page.next ? { next: page.next } : {}),
        });
      } catch (e) {
        if (e instanceof RangeError) return error(422, "invalid_value", e.message, "cursor");
        throw e;
      }
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
      const { action, label, of, ...key } = parsed.data;
      const outcome =
        action === "duplicate"
          ? await markDuplicate(key, of!, reviewer, deps)
          : action === "label"
            ? await labelItem({ ...key, label: label! }, reviewer, deps)
            : await reviseLabel(key, action === "undo" ? undefined : label, reviewer, deps);
      logger.info("review", { itemId: key.itemId, action, stored: outcome.stored, reviewer: reviewer.id });
      return json(outcome.stored ? 201 : 200, {
        stored: outcome.stored,
        final: outcome.final,
        record: viewedBy(outcome.record, reviewer),
      });
    } catch (e) {
      if (e instanceof ReviewError) return error(REVIEW_REFUSAL_STATUS[e.kind], "review_refused", e.message);
      throw e;
    }
  }
  return middy(lambdaHandler).use(captureLambdaHandler(tracer)).use(injectLambdaContext(logger));
}

/** The Lambda entry point. */
export const handler = createReviewHandler(() => sharedDependencies());
