/**
 * The age of the oldest item each invocation of the decide function received, per lane, emitted
 * as a metric. SQS's ApproximateAgeOfOldestMessage leaves out a message once it has been received
 * three times or more, and an item the overload backoff returns to its queue is soon received that
 * often: in a long overload the oldest items drop out of the queue's metric exactly when they
 * matter. Each record carries its SentTimestamp (the first send, kept across receives), so the
 * function measures what the queue's metric leaves out; the alarms and the backlog step policy
 * read the larger of the two.
 */
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { SQSRecord } from "aws-lambda";
import { type Lane, METRICS } from "../shared/domain/topology.ts";

/** The lane a record came from: the batch lane's queue, else the intake. */
export function laneOf(record: Pick<SQSRecord, "eventSourceARN">, batchQueueArn: string | undefined): Lane {
  return batchQueueArn !== undefined && record.eventSourceARN === batchQueueArn ? "batch" : "intake";
}

/**
 * Seconds since the oldest of `records` was first sent, per lane; a record without a readable
 * SentTimestamp is left out (it says nothing of its age).
 */
export function oldestItemAges(
  records: readonly Pick<SQSRecord, "eventSourceARN" | "attributes">[],
  batchQueueArn: string | undefined,
  nowMs: number,
): Map<Lane, number> {
  const ages = new Map<Lane, number>();
  for (const record of records) {
    const sent = Number(record.attributes?.SentTimestamp);
    if (!Number.isFinite(sent) || sent <= 0) continue;
    const lane = laneOf(record, batchQueueArn);
    const age = Math.max(0, (nowMs - sent) / 1000);
    ages.set(lane, Math.max(ages.get(lane) ?? 0, age));
  }
  return ages;
}

/**
 * Emits {@link oldestItemAges} of `records`, one data point per lane, each as a metric of its own
 * (Powertools' single metric) so that it carries the lane dimension besides the service. An
 * invocation emits nothing for a lane it received nothing from: no item, no age to report.
 */
export function emitOldestItemAges(
  metrics: Metrics,
  records: readonly Pick<SQSRecord, "eventSourceARN" | "attributes">[],
  batchQueueArn: string | undefined,
  nowMs: number = Date.now(),
): void {
  for (const [lane, age] of oldestItemAges(records, batchQueueArn, nowMs)) {
    const single = metrics.singleMetric();
    single.addDimension(METRICS.laneDimension, METRICS.lanes[lane]);
    single.addMetric(METRICS.oldestItemAgeSeconds, MetricUnit.Seconds, age);
  }
}
