/**
 * The capacity follower in the local mode: the same period (`followCapacity`) on a timer, with the
 * local endpoint's fixed instances for a fleet, the decide pollers for the intake mapping and the
 * local table for the readings, so the decide function's overload backoff starts from the same
 * expected wait as deployed and the pollers follow the instances as the deployed mapping does.
 */
import { systemClock } from "../../shared/domain/clock.ts";
import type { FleetReadings, MappingConcurrency } from "../../shared/domain/fleet-reading.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { CAPACITY_FOLLOWER } from "../../shared/domain/topology.ts";
import { followCapacity } from "../../shared/use-cases/follow-capacity.ts";

/** What the local follower follows. */
export interface LocalFollowerOptions {
  /** The local endpoint's instances (it runs one process: 1). */
  readonly instances: number;
  readonly secondsPerItem: number;
  readonly intake: Pick<MessageQueue, "depth">;
  readonly mapping: MappingConcurrency;
  readonly readings: Pick<FleetReadings, "record">;
  /** @default CAPACITY_FOLLOWER.periodSeconds, in milliseconds */
  readonly periodMs?: number;
  /** Told when a period fails (the next one tries again). */
  readonly onError?: (error: unknown) => void;
}

/** Runs a period now and every `periodMs`; returns its stop, which waits for a period in progress. */
export async function startLocalFollower(options: LocalFollowerOptions): Promise<() => Promise<void>> {
  const deps = {
    fleet: {
      counts: async () => ({ inService: options.instances, desired: options.instances, baking: false }),
    },
    intake: options.intake,
    mapping: options.mapping,
    readings: options.readings,
    secondsPerItem: options.secondsPerItem,
    now: systemClock,
  };
  let running: Promise<unknown> = followCapacity(deps).catch((error: unknown) => options.onError?.(error));
  await running;
  const timer = setInterval(
    () => {
      running = followCapacity(deps).catch((error: unknown) => options.onError?.(error));
    },
    options.periodMs ?? CAPACITY_FOLLOWER.periodSeconds * 1000,
  );
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
