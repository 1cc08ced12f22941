/**
 * The async lane's printout: what was read from the template, a sampled table of the run
 * (objects held back, queued and running, instances in service and starting, objects settled and
 * dead-lettered), and one summary line: time to the first and the last result, instance-hours,
 * cost, cost per 1,000 items answered and the lane's idle cost per month (its minimum instances,
 * all month), and, plainly, any object that expired in SageMaker's queue and what came of it.
 */

import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import type { AsyncShape } from "./async-template.ts";
import { HOURS_PER_MONTH, LAMBDA } from "./prices.ts";
import { formatDollars } from "./report.ts";
import type { AsyncResult } from "./simulation/async-sim.ts";

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

/** Prices the run at `dollarsPerHour` per instance; per 1,000 items answered (dead-lettered ones are no answer). */
export function asyncCostOf(shape: AsyncShape, result: AsyncResult, dollarsPerHour: number): AsyncCost {
  const instanceHours = result.instanceSeconds / 3600;
  const instanceDollars = instanceHours * dollarsPerHour;
  const lambdaDollars =
    result.lambdaGbSeconds * LAMBDA.dollarsPerGbSecond +
    (result.lambdaRuns / 1e6) * LAMBDA.dollarsPerMillionRequests;
  return {
    instanceHours,
    instanceDollars,
    lambdaDollars,
    perThousand:
      result.answeredItems > 0
        ? ((instanceDollars + lambdaDollars) / result.answeredItems) * 1000
        : Number.POSITIVE_INFINITY,
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
  const head = ["minute", "held", "queued", "running", "in service", "starting", "settled", "dead-lettered"];
  const lines = [head.join("\t")];
  result.minutes.forEach((m, i) => {
    if (i % every !== 0 && i !== result.minutes.length - 1) return;
    const row = [m.minute, m.held, m.queued, m.running, m.inService, m.starting, m.settled, m.deadLettered];
    lines.push(row.map(String).join("\t"));
  });
  return lines;
}

/**
 * What expiry came to, said plainly: nothing, or the invocations that waited past SageMaker's
 * request TTL (each a failed attempt, tried again), the objects and items dead-lettered after
 * their last try, and why.
 */
export function expiryNote(result: AsyncResult): string {
  if (result.expired === 0) return "no object expired in SageMaker's queue";
  const ttl = formatSpan(ASYNC_LANE.requestTtlSeconds);
  const lost =
    result.deadLetteredObjects > 0
      ? `${count(result.deadLetteredObjects)} objects (${count(result.deadLetteredItems)} items) dead-lettered after their last try`
      : "every one answered on a later try";
  return `${count(result.expired)} invocations expired (queued past the ${ttl} request TTL: more was handed to SageMaker than its maximum instances answer in time), ${count(result.retried)} tried again, ${lost}`;
}

/** The first and the last result, or that none came. */
function resultSpans(result: AsyncResult): string {
  if (result.answeredObjects === 0) return "no result";
  return `first result ${formatSpan(result.firstResultSeconds)}, last ${formatSpan(result.lastResultSeconds)}`;
}

/** The one summary line. */
export function asyncSummaryLine(
  shape: AsyncShape,
  result: AsyncResult,
  items: number,
  cost: AsyncCost,
): string {
  const held =
    result.longestHeldSeconds > 0
      ? `; the submit step held objects back up to ${formatSpan(result.longestHeldSeconds)} (the request TTL's budget at ${shape.maxInstances} instances)`
      : "";
  return (
    `batch of ${count(items)} items in ${count(result.objects)} objects: ${resultSpans(result)}; ${result.peakInstances} instances at peak, ` +
    `${cost.instanceHours.toFixed(2)} instance-hours (${formatDollars(cost.instanceDollars)}) + Lambda ${formatDollars(cost.lambdaDollars)}; ` +
    `${formatDollars(cost.perThousand)} per 1,000 answered; idle ${cost.idlePerMonth === 0 ? "$0" : formatDollars(cost.idlePerMonth)} per month (minimum ${shape.minInstances} instances); ` +
    `back at ${shape.minInstances} after ${formatSpan(result.idleAgainSeconds)}${held}; ${expiryNote(result)}`
  );
}
