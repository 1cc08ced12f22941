/**
 * The human route's target: the review intake. Each escalated "Decision Made" puts its item in
 * the review queue that reviewers work from (the table's `pending_review` status index) exactly
 * once: the event id is written to the record with a set-once condition, so an event that
 * arrives twice (redelivery, or a re-send after a partial failure of the decide function) creates
 * no second review task. Only the event its record stands for queues it (`event-authority.ts`):
 * a forged or altered one is refused. The caller counts the tasks created (a metric), which is
 * what tells reviewers new work is waiting.
 */
import type { DecisionStore } from "../domain/decision-store.ts";
import { type DecisionMadeDetail, verifiedRecord } from "./event-authority.ts";

/** What happened to the event. */
export type QueueOutcome = "queued" | "already_queued" | "not_for_review";

/** Queues the decision in `detail` for review at most once. */
export async function queueForReview(
  detail: DecisionMadeDetail,
  deps: { store: DecisionStore },
): Promise<QueueOutcome> {
  if (detail.route !== "human") return "not_for_review";
  const record = await verifiedRecord(detail, "human", deps);
  if (record.reviewQueuedBy) return "already_queued";
  return (await deps.store.setOnce(record, "reviewQueuedBy", detail.eventId)) ? "queued" : "already_queued";
}
