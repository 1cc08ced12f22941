/**
 * The async lane's printout: what was read from the template, a sampled table of the run
 * (objects queued and running, instances in service and starting, objects settled), and one
 * summary line: time to the first and the last result, instance-hours, cost, cost per 1,000 and
 * the lane's idle cost per month (its minimum instances, all month).
 */
import type { AsyncResult } from "./async-sim.ts";
import type { AsyncShape } from "./async-template.ts";
import { HOURS_PER_MONTH, LAMBDA } from "./prices.ts";
import { formatDollars } from "./report.ts";

const count = (n: number) => Math.round(n).toLocaleString("en");

/** A duration in the unit that reads best. */
export function formatSpan(seconds: number): string {
  if (seconds < 120) return `${seconds.toFixed(0)} s`;
  if (seconds < 2 * 3600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** What a batch costs on the async lane, and what the lane costs idle. */
export interface AsyncCost {
  readonly instanceHours: number;
  readonly instanceDollars: number;
  readonly lambdaDollars: number;
  readonly perThousand: number;
  readonly idlePerMonth: number;
}

/** Prices the run at `dollarsPerHour` per instance. */
export function asyncCostOf(
  shape: AsyncShape,
  result: AsyncResult,
  items: number,
  dollarsPerHour: number,
): AsyncCost {
  const instanceHours = result.instanceSeconds / 3600;
  const instanceDollars = instanceHours * dollarsPerHour;
  const lambdaDollars =
    result.lambdaGbSeconds * LAMBDA.dollarsPerGbSecond +
    (result.lambdaRuns / 1e6) * LAMBDA.dollarsPerMillionRequests;
  return {
    instanceHours,
    instanceDollars,
    lambdaDollars,
    perThousand: ((instanceDollars + lambdaDollars) / items) * 1000,
    idlePerMonth: shape.minInstances * dollarsPerHour * HOURS_PER_MONTH,
  };
}

/** The header lines: the lane as read from the template, and the per-item times. */
export function describeAsyncLane(
  shape: AsyncShape,
  secondsPerItem: { fresh: number; preambleCached: number },
  measuredOn: string,
): string[] {
  const wake = shape.wakeUp
    ? `wake-up +${shape.wakeUp.step} after ${shape.wakeUp.evaluationPeriods} × ${shape.wakeUp.periodSeconds} s of HasBacklogWithoutCapacity (cooldown ${shape.wakeUp.cooldownSeconds} s)`
    : "no wake-up policy: from zero, only once the backlog passes the target";
  return [
    `async endpoint: ${shape.endpointName}, ${shape.instanceType} × ${shape.minInstances} to ${shape.maxInstances}, ${shape.concurrentPerInstance} object(s) per instance at once`,
    `scaling: target ${shape.backlogTarget} objects per instance (ApproximateBacklogSizePerInstance; cooldowns out ${shape.scaleOutCooldownSeconds} s, in ${shape.scaleInCooldownSeconds} s); ${wake}`,
    `submit: ${shape.itemsPerObject} items per object, window ${shape.batchingWindowSeconds} s, ${shape.submitConcurrency} at once`,
    `per item: ${secondsPerItem.fresh.toFixed(3)} s fresh (an object's first), ${secondsPerItem.preambleCached.toFixed(3)} s under its cached preamble (${measuredOn})`,
  ];
}

/** The run, at most `rows` rows (every n-th minute for a long run, the last one always). */
export function asyncMinuteTable(result: AsyncResult, rows = 40): string[] {
  const every = Math.max(1, Math.ceil(result.minutes.length / rows));
  const head = ["minute", "queued", "running", "in service", "starting", "settled"];
  const lines = [head.join("\t")];
  result.minutes.forEach((m, i) => {
    if (i % every !== 0 && i !== result.minutes.length - 1) return;
    lines.push([m.minute, m.queued, m.running, m.inService, m.starting, m.settled].map(String).join("\t"));
  });
  return lines;
}

/** The one summary line. */
export function asyncSummaryLine(
  shape: AsyncShape,
  result: AsyncResult,
  items: number,
  cost: AsyncCost,
): string {
  const expired =
    result.expired > 0
      ? `; ${count(result.expired)} objects waited past the request TTL (raise -c asyncMaxInstanceCount)`
      : "";
  return (
    `batch of ${count(items)} items in ${count(result.objects)} objects: first result ${formatSpan(result.firstResultSeconds)}, ` +
    `last ${formatSpan(result.lastResultSeconds)}; ${result.peakInstances} instances at peak, ` +
    `${cost.instanceHours.toFixed(2)} instance-hours (${formatDollars(cost.instanceDollars)}) + Lambda ${formatDollars(cost.lambdaDollars)}; ` +
    `${formatDollars(cost.perThousand)} per 1,000; idle ${cost.idlePerMonth === 0 ? "$0" : formatDollars(cost.idlePerMonth)} per month (minimum ${shape.minInstances} instances); ` +
    `back at ${shape.minInstances} after ${formatSpan(result.idleAgainSeconds)}${expired}`
  );
}
