/**
 * The async lane's simulation on the stack's own shape (the numbers the template test reads back):
 * a batch wakes the endpoint from zero, runs at the maximum, and leaves it at zero again, with an
 * idle cost of nothing; without the wake-up policy a small batch never gets an instance and its
 * object expires on every try; more instances finish sooner for about the same instance-hours.
 */
import { describe, expect, it } from "vitest";
import { asyncCostOf } from "../../infra/capacity/async-report.ts";
import type { AsyncShape } from "../../infra/capacity/async-template.ts";
import { asyncInstanceFigures } from "../../infra/capacity/async-times.ts";
import { AWS_BEHAVIOUR } from "../../infra/capacity/aws-behaviour.ts";
import { simulateAsyncBatch } from "../../infra/capacity/simulation/async-sim.ts";
import { ASYNC_OVERHEAD } from "../../infra/capacity/simulation/async-submit-sim.ts";
import { asyncItemsPerObject } from "../../shared/domain/async/async-objects.ts";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";

/** The default stack's async lane (test/infra/async-lane.test.ts reads the same from the template). */
const SHAPE: AsyncShape = {
  endpointName: "DecisionPipeline-async-ml-c6i-xlarge",
  instanceType: "ml.c6i.xlarge",
  minInstances: 0,
  maxInstances: ASYNC_LANE.defaultMaxInstances,
  concurrentPerInstance: 1,
  backlogTarget: ASYNC_LANE.backlogPerInstanceTarget,
  scaleOutCooldownSeconds: ASYNC_LANE.scaleOutCooldownSeconds,
  scaleInCooldownSeconds: ASYNC_LANE.scaleInCooldownSeconds,
  wakeUp: { periodSeconds: 60, evaluationPeriods: 2, step: 1, cooldownSeconds: 300 },
  itemsPerObject: asyncItemsPerObject(),
  batchingWindowSeconds: 30,
  submitConcurrency: 2,
};
const figures = asyncInstanceFigures(SHAPE.instanceType);
const run = (items: number, shape: AsyncShape = SHAPE) =>
  simulateAsyncBatch({ shape, items, secondsPerItem: figures.secondsPerItem });

describe("the async lane's simulation", () => {
  it("wakes a small batch from zero through the step policy, and is back at zero with no idle cost", () => {
    const result = run(10);
    const start = AWS_BEHAVIOUR.sageMaker.instanceStartSeconds;
    // Two one-minute datapoints of HasBacklogWithoutCapacity, then an instance start, then the object.
    expect(result.firstResultSeconds).toBeGreaterThan(2 * 60 + start);
    expect(result.firstResultSeconds).toBeLessThan(4 * 60 + start + 10 * figures.secondsPerItem.fresh);
    expect(result.peakInstances).toBe(1);
    expect(result.minutes.at(-1)).toMatchObject({ inService: 0, starting: 0, queued: 0, running: 0 });
    const cost = asyncCostOf(SHAPE, result, figures.dollarsPerHour);
    expect(cost.idlePerMonth).toBe(0);
    // Billed from its start to the scale-in, which waits for 15 one-minute datapoints below the target.
    expect(result.instanceSeconds).toBeGreaterThan(start + 10 * figures.secondsPerItem.preambleCached);
    expect(result.idleAgainSeconds).toBeGreaterThanOrEqual(
      (AWS_BEHAVIOUR.scaling.scaleInDatapoints - 1) * 60,
    );
    expect(result.instanceSeconds).toBeLessThan(result.idleAgainSeconds);
  });

  it("never wakes a small batch without the step policy: its object expires on every try", () => {
    const result = run(10, { ...SHAPE, wakeUp: undefined });
    expect(result.expired).toBe(ASYNC_LANE.objectAttempts);
    expect(result.peakInstances).toBe(0);
    expect(result.instanceSeconds).toBe(0);
  });

  it("runs a large batch at the maximum; more instances finish sooner for about the same instance-hours", () => {
    const items = 100_000;
    const four = run(items);
    const sixteen = run(items, { ...SHAPE, maxInstances: 16 });
    expect(four.objects).toBe(Math.ceil(items / SHAPE.itemsPerObject));
    expect(four.peakInstances).toBe(4);
    expect(sixteen.peakInstances).toBe(16);
    // The work itself bounds the time: every object's seconds shared by the instances.
    const work =
      four.objects *
      (figures.secondsPerItem.fresh + (SHAPE.itemsPerObject - 1) * figures.secondsPerItem.preambleCached);
    expect(four.lastResultSeconds).toBeGreaterThan(work / 4);
    expect(four.lastResultSeconds).toBeLessThan(work / 4 + 3600);
    expect(sixteen.lastResultSeconds).toBeLessThan(four.lastResultSeconds / 2.5);
    expect(sixteen.instanceSeconds / four.instanceSeconds).toBeGreaterThan(0.8);
    expect(sixteen.instanceSeconds / four.instanceSeconds).toBeLessThan(1.6);
    expect(four.expired + sixteen.expired).toBe(0);
    expect(four.lambdaRuns).toBe(2 * four.objects);
    expect(ASYNC_OVERHEAD.resultSecondsPerItem).toBeGreaterThan(0);
  });

  it("refuses a GPU instance type while its GPU has no measured figures", () => {
    expect(() => asyncInstanceFigures("ml.g5.xlarge", { source: "none", gpus: {} })).toThrow(
      /A10G.*bench:gpu/,
    );
    expect(
      asyncInstanceFigures("ml.g5.xlarge", {
        source: "x",
        gpus: { "NVIDIA A10G": { source: "measured", secondsPerItem: { fresh: 0.1, preambleCached: 0.02 } } },
      }).secondsPerItem,
    ).toEqual({ fresh: 0.1, preambleCached: 0.02 });
  });
});
