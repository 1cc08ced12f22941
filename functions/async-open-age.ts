/**
 * The age of the oldest open object of each lane (handed to the async endpoint, not yet settled
 * or dead-lettered), published by the submit function as `AsyncOldestOpenObjectAgeSeconds` with
 * the lane dimension: the alarms on an object open past the hold-back's budget (batch) or past
 * minutes (the live intake under `-c endpointMode=async`) read it. SageMaker's own
 * `ApproximateAgeOfOldestRequest` counts only what waits in its queue, not an object whose
 * notification never came or whose result step keeps failing.
 */
import { type Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { AsyncObject } from "../shared/domain/async/async-objects.ts";
import { ASYNC_METRICS, type AsyncSource, METRICS } from "../shared/domain/topology.ts";

/** Open objects read per measurement: listed oldest first, so a lane's oldest is among them unless the other lane holds more. */
export const OPEN_OBJECTS_READ = 200;

/** Seconds since the oldest of `open` was submitted, per lane; a lane with nothing open is left out. */
export function oldestOpenAges(
  open: readonly Pick<AsyncObject, "source" | "submittedAt">[],
  nowMs: number,
): Map<AsyncSource, number> {
  const ages = new Map<AsyncSource, number>();
  for (const object of open) {
    const submitted = Date.parse(object.submittedAt);
    if (!Number.isFinite(submitted)) continue;
    const age = Math.max(0, (nowMs - submitted) / 1000);
    ages.set(object.source, Math.max(ages.get(object.source) ?? 0, age));
  }
  return ages;
}

/** Emits {@link oldestOpenAges}, one data point per lane, each a single metric carrying the lane dimension. */
export function emitOldestOpenAges(
  metrics: Metrics,
  open: readonly Pick<AsyncObject, "source" | "submittedAt">[],
  nowMs: number = Date.now(),
): void {
  for (const [lane, age] of oldestOpenAges(open, nowMs)) {
    const single = metrics.singleMetric();
    single.addDimension(METRICS.laneDimension, METRICS.lanes[lane]);
    single.addMetric(ASYNC_METRICS.oldestOpenObjectAgeSeconds, MetricUnit.Seconds, age);
  }
}
