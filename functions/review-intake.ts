/**
 * The review intake function: consumes the review queue that the `human` rule fills and queues
 * each escalated item for review at most once by its event id (`queueForReview`). Its metric
 * `queued` counts the review tasks created, the signal that reviewers have new work.
 */
import { METRICS } from "../shared/domain/topology.ts";
import type { DecisionMadeDetail } from "../shared/use-cases/event-authority.ts";
import { type QueueOutcome, queueForReview } from "../shared/use-cases/queue-for-review.ts";
import { type SharedDependencies, sharedDependencies } from "./support/dependencies.ts";
import { createEventQueueHandler, type EventOutcome } from "./support/event-queue-handler.ts";

/** The handler for given dependencies; `onOutcome` lets tests and the local mode count effects. */
export function createReviewIntakeHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store">>,
  onOutcome?: (detail: DecisionMadeDetail, outcome: QueueOutcome | EventOutcome) => void,
) {
  return createEventQueueHandler({
    serviceName: METRICS.service.reviewIntake,
    dependencies,
    apply: queueForReview,
    ...(onOutcome ? { onOutcome } : {}),
  });
}

/** The Lambda entry point. */
export const handler = createReviewIntakeHandler(() => sharedDependencies());
