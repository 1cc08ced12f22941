/**
 * The expected wait the decide function's overload backoff starts from: the capacity follower's
 * latest reading, read at most once per `refreshMs` per execution environment (an overload
 * refuses many items at once; one table read serves them all), and undefined when there is no
 * recent reading or it cannot be read (the fixed schedule then applies: a failed read never fails
 * the item's settlement).
 */

import type { Clock } from "../domain/clock.ts";
import { currentExpectedWait, type FleetReading, type FleetReadings } from "../domain/fleet-reading.ts";

/** Returns the expected wait in seconds, or undefined. */
export type ExpectedWait = () => Promise<number | undefined>;

/** An {@link ExpectedWait} over `readings`, read against `clock`. */
export function expectedWaitFrom(
  readings: Pick<FleetReadings, "latest">,
  clock: Clock,
  refreshMs = 10_000,
): ExpectedWait {
  let cached: { reading: FleetReading | undefined; readAt: number } | undefined;
  return async () => {
    const now = clock().getTime();
    if (!cached || now - cached.readAt >= refreshMs) {
      const reading = await readings.latest().catch(() => undefined);
      cached = { reading, readAt: now };
    }
    return currentExpectedWait(cached.reading, now);
  };
}
