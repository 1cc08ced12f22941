/**
 * What the capacity follower reads each period of the real-time endpoint and its intake queue
 * (`shared/use-cases/follow-capacity.ts`), and what the pipeline derives from it: the intake
 * mapping's concurrency (the pollers follow the instances that run, not the scaling maximum), the
 * backlog per instance that scaling tracks, and the wait an item refused for overload can expect
 * before an instance is free for it (where its first backoff starts). Pure.
 */
import { CAPACITY_FOLLOWER, LAMBDA_MIN_CONCURRENCY } from "./topology.ts";

/** One reading of the fleet and its intake. */
export interface FleetReading {
  /** Instances in service (SageMaker's CurrentInstanceCount). */
  readonly instances: number;
  /** Instances scaling has asked for, starting ones included (DesiredInstanceCount). */
  readonly desiredInstances: number;
  /** Intake items visible: waiting to be received. */
  readonly visible: number;
  /** Intake items in flight: received and not yet deleted, or hidden by an overload backoff. */
  readonly inFlight: number;
  /** Seconds one instance takes per item, as the stack was sized. */
  readonly secondsPerItem: number;
  /** When it was read (epoch milliseconds). */
  readonly at: number;
}

/** Where the latest reading is kept: written by the follower, read by the decide function. */
export interface FleetReadings {
  /** The latest reading, if any was recorded. */
  latest(): Promise<FleetReading | undefined>;
  /** Records `reading` as the latest. */
  record(reading: FleetReading): Promise<void>;
}

/** The endpoint's instances as SageMaker reports them, and whether a deployment's new fleet bakes. */
export interface FleetCounts {
  readonly inService: number;
  readonly desired: number;
  /** A blue/green deployment's new fleet takes traffic and is being watched by the rollback alarms. */
  readonly baking: boolean;
}

/** The endpoint, as far as the follower reads it. */
export interface EndpointFleet {
  counts(): Promise<FleetCounts>;
}

/** The intake mapping's concurrency, as far as the follower sets it. */
export interface MappingConcurrency {
  /** Its `MaximumConcurrency` now (undefined: none set). */
  current(): Promise<number | undefined>;
  set(maximum: number): Promise<void>;
}

/**
 * The intake mapping's `MaximumConcurrency` for `instances` in service: `perInstance` concurrent
 * batches each (`CAPACITY_FOLLOWER.concurrencyPerInstance`), rounded down, within what a mapping
 * takes (2 to `CAPACITY_FOLLOWER.maxMappingConcurrency`).
 */
export function intakeConcurrencyFor(
  instances: number,
  perInstance: number = CAPACITY_FOLLOWER.concurrencyPerInstance,
): number {
  const wanted = Math.floor(Math.max(0, instances) * perInstance);
  return Math.min(CAPACITY_FOLLOWER.maxMappingConcurrency, Math.max(LAMBDA_MIN_CONCURRENCY, wanted));
}

/**
 * Intake items waiting, visible and in flight, per instance scaling has asked for: the metric the
 * endpoint's scaling tracks (instances still starting count, so it does not ask twice for them).
 */
export function backlogPerInstance(
  reading: Pick<FleetReading, "visible" | "inFlight" | "desiredInstances">,
): number {
  return (reading.visible + reading.inFlight) / Math.max(1, reading.desiredInstances);
}

/**
 * Seconds until the instances in service reach an item that goes back to the queue now: the
 * visible items ahead of it × seconds per item ÷ instances. Items in flight are not ahead of it:
 * they are being decided, or wait out a backoff of their own.
 */
export function expectedWaitSeconds(
  reading: Pick<FleetReading, "visible" | "instances" | "secondsPerItem">,
): number {
  return (reading.visible * reading.secondsPerItem) / Math.max(1, reading.instances);
}

/**
 * The expected wait of a reading recent enough to go by (`CAPACITY_FOLLOWER.staleAfterSeconds`),
 * or undefined: no reading, or the follower has stopped (the backoff then keeps its fixed schedule).
 */
export function currentExpectedWait(reading: FleetReading | undefined, now: number): number | undefined {
  if (!reading || now - reading.at > CAPACITY_FOLLOWER.staleAfterSeconds * 1000) return undefined;
  return expectedWaitSeconds(reading);
}
