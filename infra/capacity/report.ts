/**
 * The capacity model's printout: a table with one row per minute (backlog, instances, runs in
 * flight, refusals, dead letters) and one summary line, always of the same form:
 * `rate 10/s for 30m: 4 instances (max 4), 8 concurrent batches, decided 4,100, waiting 13,900,
 * dead-lettered 0, p99 812 s, $0.11 per 1,000, $695 per month; suggests 21 instances for 10/s (the
 * fresh row; --preamble-cached for items under a cached policy preamble)`.
 */
import type { RunCost } from "./cost.ts";
import type { LoadProfile } from "./load.ts";
import type { SimulationResult } from "./result.ts";
import type { PipelineShape } from "./shape.ts";

const count = (n: number) => Math.round(n).toLocaleString("en");

/** A duration as the flags take it: `30m`, `90s`, `2h`. */
export function formatDuration(seconds: number): string {
  if (seconds % 3600 === 0 && seconds >= 7200) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** Dollars: whole above $100, cents above $1, two significant digits below. */
export function formatDollars(x: number): string {
  if (x >= 100) return `$${count(x)}`;
  if (x >= 1) return `$${x.toFixed(2)}`;
  return `$${x.toPrecision(2)}`;
}

/** Seconds: whole from 10 s, one decimal below (the summary line and the sizing table alike). */
export function formatSeconds(s: number): string {
  return s >= 10 ? `${count(s)} s` : `${s.toFixed(1)} s`;
}

/** The header lines: what was read and what is simulated. */
export function describeRun(shape: PipelineShape, load: LoadProfile, secondsPerItem: number): string[] {
  const e = shape.endpoint;
  const where =
    e.mode === "serverless"
      ? `serverless ${e.serverless?.memoryMiB} MB, MaxConcurrency ${e.maxInstances}`
      : `${e.instanceType} × ${e.initialInstances} (min ${e.minInstances}, max ${e.maxInstances}), routing ${e.routing}`;
  const policies = shape.policies.map((p) =>
    p.kind === "target"
      ? `target tracking ${p.metric} = ${p.target} (cooldowns out ${p.scaleOutCooldown} s, in ${p.scaleInCooldown} s)`
      : `step on ${p.alarm.metric} ${p.alarm.comparison} ${p.alarm.threshold} (${p.alarm.datapointsToAlarm} of ${p.alarm.evaluationPeriods} × ${p.alarm.periodSeconds} s)`,
  );
  const lane = shape.intake;
  const burst = load.burst
    ? `, ${load.burst.factor}x from ${formatDuration(load.burst.startSeconds)} for ${formatDuration(load.burst.durationSeconds)}`
    : "";
  return [
    `endpoint: ${where}; container queue ${e.queueSize}, deadline ${e.deadlineSeconds} s per ${e.deadlineScope}; ${secondsPerItem.toFixed(3)} s per item`,
    `scaling: ${policies.length > 0 ? policies.join("; ") : "none"}`,
    `intake: batch ${lane.batchSize}, window ${lane.batchingWindowSeconds} s, MaximumConcurrency ${lane.maxConcurrency ?? "none"}, visibility ${lane.visibilityTimeoutSeconds} s, maxReceiveCount ${lane.maxReceiveCount ?? "none"}${shape.overload ? ", overload backoff on" : ""}`,
    `decide: timeout ${shape.decide.timeoutSeconds} s, ${shape.decide.endpointAttempts} tries of ${shape.decide.endpointTimeoutSeconds} s, ${shape.decide.endpointBatchItems} items per call`,
    `load: ${load.ratePerSecond}/s for ${formatDuration(load.durationSeconds)}${burst}`,
  ];
}

/** The per-minute table. */
export function minuteTable(result: SimulationResult): string[] {
  const head = [
    "minute",
    "arrived",
    "decided",
    "backlog",
    "instances",
    "in flight",
    "refusals",
    "dead letters",
  ];
  const rows = result.minutes.map((m) => [
    String(m.minute),
    count(m.arrived),
    count(m.decided),
    count(m.backlog),
    m.starting > 0 ? `${m.inService}+${m.starting}` : String(m.inService),
    String(m.inFlight),
    count(m.refusals),
    count(m.deadLettered),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  return [line(head), ...rows.map(line)];
}

/** What the sizing search suggests for a steady rate, and for which workload row. */
export interface Suggestion {
  /** The fewest instances that keep up; undefined when none within four times the busy count does. */
  readonly instances: number | undefined;
  readonly workload: "fresh" | "preambleCached";
}

/** The suggestion's clause: the count, the workload row it is, and how to ask for the other. */
function suggestionClause(rate: number, suggestion: Suggestion): string {
  const cached = suggestion.workload === "preambleCached";
  const row = cached
    ? "the cached-preamble row; without --preamble-cached for fresh items"
    : "the fresh row; --preamble-cached for items under a cached policy preamble";
  const count =
    suggestion.instances === undefined
      ? "no instance count keeps up (see npm run sizing)"
      : `${suggestion.instances} instances`;
  return `; suggests ${count} for ${rate}/s (${row})`;
}

/** The one summary line. */
export function summaryLine(
  shape: PipelineShape,
  load: LoadProfile,
  result: SimulationResult,
  cost: RunCost,
  suggestion?: Suggestion,
): string {
  const perThousand = cost.perThousand === undefined ? "n/a" : formatDollars(cost.perThousand);
  const p99 = result.decided > 0 ? formatSeconds(result.p99Seconds) : "n/a";
  return (
    `rate ${load.ratePerSecond}/s for ${formatDuration(result.usage.seconds)}: ` +
    `${result.peakInstances} instances (max ${shape.endpoint.maxInstances}), ` +
    `${result.peakConcurrency} concurrent batches, decided ${count(result.decided)}, ` +
    `waiting ${count(result.waiting)}, dead-lettered ${count(result.deadLettered)}, p99 ${p99}, ` +
    `${perThousand} per 1,000, ${formatDollars(cost.perMonth)} per month` +
    (suggestion ? suggestionClause(load.ratePerSecond, suggestion) : "")
  );
}
