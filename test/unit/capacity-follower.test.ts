/**
 * The capacity model's new parts, one behaviour at a time on hand-written shapes: the capacity
 * follower (the intake's concurrency follows the instances in service; a refused item's first
 * backoff is the expected wait), the capped work metric and the scale-in guard.
 */
import { describe, expect, it } from "vitest";
import { overloadShape } from "../../infra/capacity/overload.ts";
import type { FollowerShape, PipelineShape, PolicyShape } from "../../infra/capacity/shape.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { queueingShape, variant } from "../helpers/capacity-shapes.ts";

const follower: FollowerShape = {
  periodSeconds: 60,
  concurrencyPerInstance: 1.5,
  maxConcurrency: 1000,
  secondsPerItem: 1,
};
const backoff = { firstSeconds: 30, maxSeconds: 900, maxItemFailures: 5, maxReceiveCount: 1000 };

/** An endpoint that admits one waiting call per instance and refuses the rest, overload backed off. */
function admitting(instances: number, extra: Partial<PipelineShape> = {}): PipelineShape {
  return {
    ...variant(queueingShape(instances), {
      endpoint: { queueSize: 1, routing: "least-outstanding" },
      intake: { batchSize: 1, maxConcurrency: 8 * instances, maxReceiveCount: 1000 },
      overload: overloadShape({ ...backoff, shortestFirstSeconds: 2 }),
    }),
    ...extra,
  };
}

const run = (shape: PipelineShape, rate: number, seconds: number, seed = 1) =>
  simulate({ shape, load: { ratePerSecond: rate, durationSeconds: seconds }, secondsPerItem: 1, seed });

describe("the capacity follower in the model", () => {
  it("holds the intake to the batches the instances in service admit, not the mapping's maximum", () => {
    const fixed = run(admitting(4), 3.6, 1800);
    const followed = run(admitting(4, { follower }), 3.6, 1800);
    // Without it, 32 batches against 8 admission slots; with it, 6 once the follower has run.
    expect(Math.max(...fixed.minutes.slice(2).map((m) => m.inFlight))).toBeGreaterThan(8);
    expect(Math.max(...followed.minutes.slice(2).map((m) => m.inFlight))).toBeLessThanOrEqual(6);
    expect(followed.refusals.queueFull).toBeLessThan(fixed.refusals.queueFull / 3);
  });

  it("brings an item refused by a nearly idle fleet back in seconds, where the fixed schedule waited 15 to 30", () => {
    // Two calls met on one instance while others were idle: the expected wait is near 0.
    const shape = admitting(6, { intake: { ...admitting(6).intake, maxConcurrency: 12 } });
    const fixed = run({ ...shape, overload: overloadShape(backoff) }, 3, 1800);
    const expected = run({ ...shape, follower }, 3, 1800);
    expect(fixed.refusals.queueFull).toBeGreaterThan(0);
    expect(expected.refusals.queueFull).toBeGreaterThan(0);
    expect(expected.p99Seconds).toBeLessThan(fixed.p99Seconds / 2);
  });
});

describe("scaling on the work", () => {
  const scalable = (policies: PolicyShape[]) =>
    admitting(1, {
      endpoint: { ...admitting(1).endpoint, minInstances: 1, maxInstances: 20 },
      intake: { ...admitting(1).intake, maxConcurrency: 2 },
      follower,
      policies,
    });
  const work = (cap?: number): PolicyShape => ({
    kind: "target",
    name: "work",
    metric: "concurrentRequestsPerModel",
    target: 0.7,
    ...(cap !== undefined ? { cap } : {}),
    periodSeconds: 60,
    scaleOutCooldown: 300,
    scaleInCooldown: 300,
    disableScaleIn: true,
  });

  it("adds at most cap ÷ target of the fleet per scale-out with a capped metric, where a saturated one multiplies", () => {
    const capped = run(scalable([work(0.9)]), 1.6, 1800);
    const saturating = run(scalable([work()]), 1.6, 1800);
    for (const event of capped.scaleEvents)
      expect(event.to).toBeLessThanOrEqual(Math.ceil((event.from * 0.9) / 0.7));
    expect(saturating.scaleEvents.some((e) => e.to > Math.ceil((e.from * 0.9) / 0.7))).toBe(true);
  });

  it("removes instances only while the rest would stay under the target, so a low steady rate holds still", () => {
    const guard: PolicyShape = {
      kind: "step",
      name: "scale-in",
      alarm: {
        metric: "concurrentRequestsWithOneFewer",
        threshold: 0.63,
        comparison: "atOrBelow",
        periodSeconds: 60,
        evaluationPeriods: 15,
        datapointsToAlarm: 15,
      },
      adjustmentType: "ChangeInCapacity",
      steps: [{ lower: undefined, upper: 0, adjustment: -1 }],
      cooldown: 300,
    };
    const start = variant(scalable([work(0.9), guard]), { endpoint: { initialInstances: 6 } });
    const result = run(start, 0.6, 3 * 3600);
    // 0.6 items/s at 1 s each: two instances keep under 0.63 of a slot with one fewer, one would not.
    const last = result.minutes.at(-1)!;
    expect(last.inService + last.starting).toBe(2);
    expect(result.scaleEvents.every((e) => e.to < e.from)).toBe(true);
  });
});
