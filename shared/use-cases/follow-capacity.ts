/**
 * One period of the capacity follower: reads the endpoint's instance counts and the intake's
 * depth, sets the intake mapping's concurrency to what the instances in service admit (only when
 * it differs, so a quiet period makes no control-plane call beyond the reads), and records the
 * reading the decide function's overload backoff starts from. What it returns is what the
 * function publishes: the backlog per instance that scaling tracks, the instances in service that
 * the scale-in guard reads, and whether a deployment bakes (the rollback alarms' window).
 */

import type { Clock } from "../domain/clock.ts";
import {
  backlogPerInstance,
  type EndpointFleet,
  expectedWaitSeconds,
  type FleetReading,
  type FleetReadings,
  intakeConcurrencyFor,
  type MappingConcurrency,
} from "../domain/fleet-reading.ts";
import type { MessageQueue } from "../domain/message-queue.ts";

/** What one period needs. */
export interface FollowCapacityDependencies {
  readonly fleet: EndpointFleet;
  readonly intake: Pick<MessageQueue, "depth">;
  readonly mapping: MappingConcurrency;
  readonly readings: Pick<FleetReadings, "record">;
  /** Seconds one instance takes per item, as the stack was sized. */
  readonly secondsPerItem: number;
  /** Intake batches per instance in service. @default CAPACITY_FOLLOWER.concurrencyPerInstance */
  readonly concurrencyPerInstance?: number;
  /** The time the reading is taken at. */
  readonly now: Clock;
}

/** What one period found and did. */
export interface FollowedCapacity {
  readonly reading: FleetReading;
  /** The intake's concurrency now, and what it was (equal when unchanged). */
  readonly concurrency: number;
  readonly previousConcurrency: number | undefined;
  readonly backlogPerInstance: number;
  readonly expectedWaitSeconds: number;
  readonly baking: boolean;
}

/** Runs one period. */
export async function followCapacity(deps: FollowCapacityDependencies): Promise<FollowedCapacity> {
  const [counts, depth, previous] = await Promise.all([
    deps.fleet.counts(),
    deps.intake.depth(),
    deps.mapping.current(),
  ]);
  const reading: FleetReading = {
    instances: counts.inService,
    desiredInstances: counts.desired,
    visible: depth.visible,
    inFlight: depth.inFlight,
    secondsPerItem: deps.secondsPerItem,
    at: deps.now().getTime(),
  };
  const concurrency = intakeConcurrencyFor(counts.inService, deps.concurrencyPerInstance);
  if (concurrency !== previous) await deps.mapping.set(concurrency);
  await deps.readings.record(reading);
  return {
    reading,
    concurrency,
    previousConcurrency: previous,
    backlogPerInstance: backlogPerInstance(reading),
    expectedWaitSeconds: expectedWaitSeconds(reading),
    baking: counts.baking,
  };
}
