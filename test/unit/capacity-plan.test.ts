/**
 * The capacity plan: for every provisioning in a grid, the items the two event source mappings
 * keep in flight at the minimum capacity, spread over its instances, take one instance less than
 * the endpoint's deadline at the measured seconds per fresh item (with the margin); the admission
 * queue lets every planned call wait; serverless stays within its MaxConcurrency; and a
 * provisioning that cannot fit is refused naming what to change. (The template test reads the same
 * numbers back from the synthesized stack.)
 */
import { describe, expect, it } from "vitest";
import {
  capacityPlan,
  DECIDE_FUNCTION,
  ENDPOINT_DEADLINE_MS,
  MEASURED_SECONDS_PER_ITEM,
  SIZING_MARGIN,
} from "../../shared/domain/topology.ts";

const secondsPerItem = MEASURED_SECONDS_PER_ITEM.fresh * SIZING_MARGIN;

describe("capacityPlan", () => {
  it("fits the deadline at the minimum capacity, real-time, for every minimum and maximum", () => {
    for (let min = 1; min <= 8; min++)
      for (const max of [min, 2 * min, 4 * min, 10 * min, 40 * min]) {
        const plan = capacityPlan({ mode: "realtime", minInstances: min, maxInstances: max });
        const calls = Math.ceil((plan.intake + plan.batch) / min);
        const where = `${min} to ${max}: ${JSON.stringify(plan)}`;
        expect(calls * plan.batchSize * secondsPerItem, where).toBeLessThan(plan.deadlineMs / 1000);
        expect(plan.queueSize, where).toBeGreaterThanOrEqual(calls - 1);
        expect(plan.batchSize).toBeGreaterThanOrEqual(1);
        expect(plan.batchSize).toBeLessThanOrEqual(DECIDE_FUNCTION.batchSize);
        expect(Math.min(plan.intake, plan.batch)).toBeGreaterThanOrEqual(2);
        // Scaling out has work: at least one intake call per instance at the maximum, while that fits.
        expect(plan.intake, where).toBeGreaterThanOrEqual(
          Math.min(max, Math.floor(plan.deadlineMs / 1000 / secondsPerItem) * min - plan.batch),
        );
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
      capacityPlan({ mode: "realtime", minInstances: 1, maxInstances: 4, secondsPerItem: 10 }),
    ).toThrow(/cannot finish within the 48000 ms deadline .* raise the minimum instances/);
  });
});
