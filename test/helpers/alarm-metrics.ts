/**
 * What a synthesized CloudWatch alarm watches, read from its template properties: its one metric,
 * or each metric of its metric math, and whether it is the oldest-item-age expression
 * (`oldestItemAge` in `infra/constructs/operations/pipeline-metrics.ts`).
 */
import { METRICS } from "../../shared/domain/topology.ts";

/** One metric an alarm reads. */
export interface WatchedMetric {
  readonly Namespace: string;
  readonly MetricName: string;
  readonly Dimensions?: readonly { Name: string; Value: unknown }[];
}

/** The metrics alarm `props` reads: its own, or each MetricStat of its metric math. */
export function watchedMetrics(props: Record<string, unknown>): WatchedMetric[] {
  const queries = props.Metrics as { MetricStat?: { Metric: WatchedMetric } }[] | undefined;
  if (!queries) return [props as unknown as WatchedMetric];
  return queries.flatMap((q) => (q.MetricStat ? [q.MetricStat.Metric] : []));
}

/**
 * Whether alarm `props` reads the larger of SQS's ApproximateAgeOfOldestMessage of the queue with
 * logical id `queueId` and the decide function's oldest item age on `lane`.
 */
export function readsOldestItemAge(props: Record<string, unknown>, queueId: string, lane: string): boolean {
  const queries = (props.Metrics ?? []) as { Expression?: string; ReturnData?: boolean }[];
  const returned = queries.filter((q) => q.ReturnData !== false);
  if (returned.length !== 1 || !/^MAX\(\[/.test(returned[0]!.Expression ?? "")) return false;
  const metrics = watchedMetrics(props);
  const sqs = metrics.filter(
    (m) =>
      m.Namespace === "AWS/SQS" &&
      m.MetricName === "ApproximateAgeOfOldestMessage" &&
      JSON.stringify(m.Dimensions).includes(`"${queueId}"`),
  );
  const received = metrics.filter(
    (m) =>
      m.Namespace === METRICS.namespace &&
      m.MetricName === METRICS.oldestItemAgeSeconds &&
      m.Dimensions?.some((d) => d.Name === METRICS.laneDimension && d.Value === lane) === true,
  );
  return metrics.length === 2 && sqs.length === 1 && received.length === 1;
}
