/**
 * What a simulation run reports: the run minute by minute, the totals, the latency of the items
 * decided, and what was used (for pricing).
 */
import type { RefusalCounters } from "./simulation/invocation-sim.ts";
import type { Datapoint, ScaleEvent } from "./simulation/scaling-sim.ts";

/** One minute of the run. */
export interface MinuteRow {
  /** Minutes since the start, at the end of this one. */
  readonly minute: number;
  readonly arrived: number;
  /** Items decided in this minute. */
  readonly decided: number;
  /** Items arrived and neither decided nor dead-lettered (visible or in flight) at the minute's end. */
  readonly backlog: number;
  readonly inService: number;
  readonly starting: number;
  /** Runs of the decide function (concurrent batches) at the minute's end. */
  readonly inFlight: number;
  /** Item-level refusals in the minute: 503 queue_full, 504 deadline, throttles, call timeouts. */
  readonly refusals: number;
  /** Dead letters so far. */
  readonly deadLettered: number;
}

/** What was used, for pricing. */
export interface Usage {
  readonly seconds: number;
  /** Real-time instance-seconds, from launch (starting instances are billed too). */
  readonly instanceSeconds: number;
  /** Serverless container-seconds of work. */
  readonly serverlessBusySeconds: number;
  /** Decide-function seconds and runs. */
  readonly lambdaSeconds: number;
  readonly lambdaRuns: number;
}

/** The run's outcome. */
export interface SimulationResult {
  readonly minutes: readonly MinuteRow[];
  readonly arrived: number;
  readonly decided: number;
  /** Arrived, neither decided nor dead-lettered at the end: counted, not hidden. */
  readonly waiting: number;
  readonly deadLettered: number;
  /** Over the items decided: seconds from arrival to decision. */
  readonly p99Seconds: number;
  readonly meanSeconds: number;
  /** Over the items received: seconds from arrival to their first receive, and the share that waited. */
  readonly meanQueueWaitSeconds: number;
  readonly waitedFraction: number;
  /** Most instances in service at once (serverless: containers started). */
  readonly peakInstances: number;
  /** Most decide-function runs (concurrent batches) at once. */
  readonly peakConcurrency: number;
  readonly refusals: Readonly<RefusalCounters>;
  /** Items by the receives they took (index: receive count), over all items arrived. */
  readonly receives: readonly number[];
  readonly scaleEvents: readonly ScaleEvent[];
  readonly datapoints: readonly Datapoint[];
  readonly usage: Usage;
}
