/**
 * The metrics scaling reads in the simulation, as CloudWatch would give them: every 10 s the
 * endpoint and its queue are sampled, and a policy's datapoint is one metric over the last samples
 * of its period (invocations per instance as a per-minute figure, concurrency averaged, the
 * oldest message's age at its highest, the visible messages and the backlog per instance as last
 * sampled). `scaling-sim.ts` is what Application Auto Scaling does with them.
 */
import { backlogPerInstance } from "../../../shared/domain/fleet-reading.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import type { ScalingMetric } from "../shape.ts";

/** What the scale-in guard reads of a single instance: no instance fewer is possible. */
const ONE_INSTANCE = 1_000;
/** Seconds between metric samples. */
export const SAMPLE_SECONDS = AWS_BEHAVIOUR.scaling.highResolutionPeriodSeconds;

/** One sample of the endpoint and its queue. */
export interface Sample {
  readonly invocations: number;
  readonly concurrency: number;
  readonly inService: number;
  readonly visible: number;
  /** Items arrived and neither decided nor dead-lettered: visible and in flight. */
  readonly backlog: number;
  readonly desired: number;
  readonly oldestAge: number;
}

/** The metric over the last `count` samples. */
export function metricValue(samples: readonly Sample[], metric: ScalingMetric, count: number): number {
  const window = samples.slice(-count);
  const last = window[window.length - 1]!;
  const instances = Math.max(1, last.inService);
  switch (metric) {
    case "invocationsPerInstance":
      // A per-minute figure, whatever the period.
      return (window.reduce((s, x) => s + x.invocations, 0) / instances) * (60 / (count * SAMPLE_SECONDS));
    case "concurrentRequestsPerModel":
      return window.reduce((s, x) => s + x.concurrency, 0) / window.length;
    case "concurrentRequestsWithOneFewer": {
      const concurrency = window.reduce((s, x) => s + x.concurrency, 0) / window.length;
      return last.inService > 1 ? (concurrency * last.inService) / (last.inService - 1) : ONE_INSTANCE;
    }
    case "oldestMessageAge":
      return Math.max(...window.map((x) => x.oldestAge));
    case "visibleMessages":
      return last.visible;
    case "backlogPerInstance":
      return backlogPerInstance({
        visible: last.visible,
        inFlight: last.backlog - last.visible,
        desiredInstances: last.desired,
      });
  }
}
