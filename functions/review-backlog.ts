/**
 * The review-backlog function, run every five minutes: publishes each policy's pending review
 * count and the age of its oldest pending item (metrics `PendingReviews` and
 * `OldestPendingReviewMinutes`, dimension `policy`), which the per-policy service-level alarms
 * watch.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { EventBridgeSchema } from "@aws-lambda-powertools/parser/schemas/eventbridge";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { METRICS, REVIEW } from "../shared/domain/topology.ts";
import { reviewBacklog } from "../shared/use-cases/review/review-backlog.ts";
import { positiveInteger } from "./support/config.ts";
import { type SharedDependencies, sharedDependencies } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: METRICS.service.reviewBacklog });

/** The handler for given dependencies. */
export function createReviewBacklogHandler(
  dependencies: () => Promise<SharedDependencies>,
  metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service.reviewBacklog, logger }),
) {
  const resolved = lazy(dependencies);
  async function lambdaHandler(): Promise<unknown> {
    const limit = positiveInteger(FUNCTION_ENV.REVIEW_WITHIN_MINUTES, REVIEW.defaultServiceLevelMinutes);
    const backlog = await reviewBacklog(await resolved(), new Date(), limit);
    for (const row of backlog) {
      // Single metrics, flushed at once: the policy is a dimension of these two metrics only.
      for (const [name, value] of [
        [METRICS.pendingReviews, row.pending],
        [METRICS.oldestPendingReviewMinutes, row.oldestMinutes],
      ] as const) {
        const single = metrics.singleMetric();
        single.addDimension(METRICS.policyDimension, row.policyId);
        single.addMetric(name, MetricUnit.Count, value);
      }
    }
    logger.info("review backlog", { backlog });
    return { backlog };
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(parser({ schema: EventBridgeSchema }));
}

/** The Lambda entry point. */
export const handler = createReviewBacklogHandler(() => sharedDependencies());
