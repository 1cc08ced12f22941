/**
 * The capacity follower's arithmetic: the intake's concurrency follows the instances in service
 * (not the scaling maximum), the backlog per instance counts what is in flight, and the expected
 * wait of a refused item counts the visible items ahead of it, for a reading recent enough.
 */
import { describe, expect, it } from "vitest";
import {
  backlogPerInstance,
  currentExpectedWait,
  expectedWaitSeconds,
  intakeConcurrencyFor,
} from "../../shared/domain/fleet-reading.ts";
import { CAPACITY_FOLLOWER } from "../../shared/domain/topology.ts";

const reading = { instances: 4, desiredInstances: 6, visible: 120, inFlight: 30, secondsPerItem: 1.5, at: 0 };

describe("the fleet reading", () => {
  it("gives the intake three concurrent batches per two instances in service, within a mapping's 2 to 1,000", () => {
    expect(CAPACITY_FOLLOWER.concurrencyPerInstance).toBe(1.5);
    expect([0, 1, 2, 3, 4, 21, 193, 2_000].map((n) => intakeConcurrencyFor(n))).toEqual([
      2, 2, 3, 4, 6, 31, 289, 1_000,
    ]);
    expect(intakeConcurrencyFor(21, 2)).toBe(42);
  });

  it("counts visible and in-flight items per instance asked for, starting ones included", () => {
    expect(backlogPerInstance(reading)).toBe(25);
    expect(backlogPerInstance({ ...reading, desiredInstances: 0 })).toBe(150);
  });

  it("expects a refused item to wait for the visible items ahead of it, at the instances in service", () => {
    expect(expectedWaitSeconds(reading)).toBe(45);
    expect(expectedWaitSeconds({ ...reading, visible: 0 })).toBe(0);
    expect(expectedWaitSeconds({ ...reading, instances: 0 })).toBe(180);
  });

  it("goes by a reading only while it is recent", () => {
    const stale = CAPACITY_FOLLOWER.staleAfterSeconds * 1000;
    expect(currentExpectedWait(reading, stale)).toBe(45);
    expect(currentExpectedWait(reading, stale + 1)).toBeUndefined();
    expect(currentExpectedWait(undefined, 0)).toBeUndefined();
  });
});
