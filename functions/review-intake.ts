/**
 * The review intake function: consumes the review queue that the `human` rule fills (SQS, batch
 * with partial failures) and queues each escalated item for review at most once by its event id
 * (`queueForReview`). It counts the review tasks it creates, the signal that reviewers have new
 * work; a message it cannot handle returns to the queue and, after the receive limit, goes to the
 * queue's dead-letter queue.
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import middy from "@middy/core";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import type { DecisionMadeDetail } from "../shared/targets/apply-decision.ts";
import { type QueueOutcome, queueForReview } from "../shared/targets/queue-for-review.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";

const logger = new Logger({ serviceName: "review-intake" });
const metrics = new Metrics({ namespace: "DecisionPipeline", serviceName: "review-intake", logger });

/** The handler for given dependencies; `onOutcome` lets tests and the local mode count effects. */
export function createReviewIntakeHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store">>,
  onOutcome?: (detail: DecisionMadeDetail, outcome: QueueOutcome) => void,
) {
  let resolved: Promise<Pick<SharedDependencies, "store">> | undefined;
  const processor = new BatchProcessor(EventType.SQS);
  async function recordHandler(record: SQSRecord): Promise<void> {
    resolved ??= dependencies();
    const event = JSON.parse(record.body) as { detail?: DecisionMadeDetail };
    if (!event.detail?.eventId) throw new Error(`message ${record.messageId} is not a "Decision Made" event`);
    const outcome = await queueForReview(event.detail, await resolved);
    onOutcome?.(event.detail, outcome);
    if (outcome === "queued") metrics.addMetric("review_tasks_created", MetricUnit.Count, 1);
    logger.debug("review intake", { itemId: event.detail.itemId, outcome });
  }
  async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    return processPartialResponse(event, recordHandler, processor, { context });
  }
  return middy(lambdaHandler).use(injectLambdaContext(logger)).use(logMetrics(metrics));
}

/** The Lambda entry point. */
export const handler = createReviewIntakeHandler(() => sharedDependencies());
