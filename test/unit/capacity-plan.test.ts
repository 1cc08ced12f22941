/**
 * The capacity plan: for every provisioning in a grid, the items an instance admits (the call it
 * runs and those its admission queue holds) take less than the endpoint's deadline at the
 * measured seconds per fresh item (with the margin), at any capacity; the intake starts with the
 * batches the instances at the minimum admit (the capacity follower moves it with the fleet); serverless stays within its
 * MaxConcurrency; and a model too slow for the deadline is refused. (The template test reads the
 * same numbers back from the synthesized stack.)
 */
import { describe, expect, it } from "vitest";
import { capacityPlan } from "../../shared/domain/capacity-plan.ts";
import { intakeConcurrencyFor } from "../../shared/domain/fleet-reading.ts";
import {
  DECIDE_FUNCTION,
  ENDPOINT_DEADLINE_MS,
  MEASURED_SECONDS_PER_ITEM,
  SIZING_MARGIN,
} from "../../shared/domain/topology.ts";

const secondsPerItem = MEASURED_SECONDS_PER_ITEM.fresh * SIZING_MARGIN;

describe("capacityPlan", () => {
  it("serves every admitted item within the deadline and keeps the maximum busy, real-time", () => {
    for (let min = 1; min <= 8; min++)
      for (const max of [min, 2 * min, 4 * min, 10 * min, 40 * min, 250]) {
        if (max < min) continue;
        const plan = capacityPlan({ mode: "realtime", minInstances: min, maxInstances: max });
        const where = `${min} to ${max}: ${JSON.stringify(plan)}`;
        // The call an instance runs and the calls its admission queue holds, all items served in time.
        const admitted = (plan.queueSize + 1) * plan.batchSize;
        expect(admitted * secondsPerItem, where).toBeLessThan(plan.deadlineMs / 1000);
        expect(plan.batchSize).toBeGreaterThanOrEqual(1);
        expect(plan.batchSize).toBeLessThanOrEqual(DECIDE_FUNCTION.batchSize);
        expect(Math.min(plan.intake, plan.batch)).toBeGreaterThanOrEqual(2);
        // The pollers start at what the minimum admits, never the maximum; the follower moves them.
        expect(plan.intake, where).toBe(intakeConcurrencyFor(min));
        expect(plan.intake, where).toBeLessThanOrEqual(Math.max(2, min * (plan.queueSize + 1)));
        expect(plan.intakeAtMaximum, where).toBe(intakeConcurrencyFor(max));
      }
  });

  it("keeps the intake and the batch lane within a serverless MaxConcurrency, one call per instance", () => {
    for (let max = 4; max <= 200; max += 7) {
      const plan = capacityPlan({ mode: "serverless", minInstances: 1, maxInstances: max });
      expect(plan.intake + plan.batch).toBeLessThanOrEqual(max);
      expect(plan.batchSize * secondsPerItem).toBeLessThan(plan.deadlineMs / 1000);
    }
    expect(() => capacityPlan({ mode: "serverless", minInstances: 1, maxInstances: 3 })).toThrow(
      /need 4 concurrent invocations .* over the serverless MaxConcurrency 3/,
    );
  });

  it("uses the endpoint's deadline, and refuses a model too slow for even one item per call", () => {
    expect(capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 4 }).deadlineMs).toBe(
      ENDPOINT_DEADLINE_MS,
    );
    expect(() =>
      capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 4, secondsPerItem: 20 }),
    ).toThrow(/cannot finish within the 48000 ms deadline .* too slow/);
  });
});
