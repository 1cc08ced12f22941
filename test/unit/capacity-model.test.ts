/**
 * The capacity model's parts, one behaviour at a time on hand-written shapes: the container's
 * admission queue and deadline, receive counts and dead letters, the overload backoff, Lambda's
 * scale-up, SageMaker's target tracking and step scaling with the instance start time, serverless
 * throttling, and the load profile.
 */
import { describe, expect, it } from "vitest";
import { arrivalTimes, expectedArrivals } from "../../infra/capacity/load.ts";
import { overloadShape } from "../../infra/capacity/overload.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { queueingShape, variant } from "../helpers/capacity-shapes.ts";

const one = queueingShape(1);
const run = (shape: typeof one, rate: number, seconds: number, extra: { runSeconds?: number } = {}) =>
  simulate({ shape, load: { ratePerSecond: rate, durationSeconds: seconds }, secondsPerItem: 1, ...extra });

describe("the endpoint's admission", () => {
  it("refuses requests past the queue with 503 queue_full, and serves the rest", () => {
    const shape = variant(one, { endpoint: { queueSize: 2 }, intake: { maxConcurrency: 5 } });
    const result = run(shape, 3, 600);
    expect(result.refusals.queueFull).toBeGreaterThan(100);
    expect(result.refusals.deadline).toBe(0);
    // One instance at 1 s per item decides about one item a second, whatever the refusals.
    expect(result.decided).toBeGreaterThan(550);
    expect(result.decided).toBeLessThanOrEqual(601);
  });

  it("answers a batched call's items past the deadline with 504, round-robin among the calls", () => {
    const shape = variant(one, {
      endpoint: { deadlineSeconds: 5 },
      intake: { batchSize: 10, maxConcurrency: 4 },
      decide: { endpointBatchItems: 10 },
    });
    const result = run(shape, 5, 600);
    // Four calls of ten share one instance: about five items fit each five-second deadline.
    expect(result.refusals.deadline).toBeGreaterThan(result.decided);
    expect(result.decided).toBeGreaterThan(500);
  });
});

describe("receives and dead letters", () => {
  const overloaded = variant(one, {
    endpoint: { queueSize: 1 },
    intake: { batchSize: 1, maxConcurrency: 8, visibilityTimeoutSeconds: 30, maxReceiveCount: 3 },
  });

  it("dead-letters an item refused on every one of its receives", () => {
    const result = run(overloaded, 3, 900);
    expect(result.deadLettered).toBeGreaterThan(100);
    expect(result.arrived).toBe(result.decided + result.waiting + result.deadLettered);
  });

  it("never dead-letters for overload when the function backs off and counts only item failures", () => {
    const shape = variant(overloaded, {
      intake: { maxReceiveCount: 1000 },
      overload: overloadShape({
        firstSeconds: 30,
        maxSeconds: 900,
        maxItemFailures: 5,
        maxReceiveCount: 1000,
      }),
    });
    const result = run(shape, 3, 900, { runSeconds: 900 + 3 * 3600 });
    expect(result.deadLettered).toBe(0);
    expect(result.refusals.queueFull).toBeGreaterThan(100);
    // Everything is decided once the load is gone: nothing lost, nothing left.
    expect(result.waiting).toBe(0);
    expect(result.decided).toBe(result.arrived);
  });
});

describe("Lambda's scale-up", () => {
  it("starts at five concurrent batches and adds about 300 a minute while messages wait", () => {
    const shape = variant(queueingShape(2000), { intake: { batchSize: 10, maxConcurrency: 1000 } });
    const result = simulate({
      shape,
      load: { ratePerSecond: 2000, durationSeconds: 300 },
      secondsPerItem: 100,
    });
    const inFlight = result.minutes.map((m) => m.inFlight);
    expect(inFlight[0]).toBeGreaterThanOrEqual(300);
    expect(inFlight[0]).toBeLessThanOrEqual(306);
    expect(inFlight[1]).toBeGreaterThanOrEqual(600);
    expect(inFlight[1]).toBeLessThanOrEqual(606);
    expect(result.peakConcurrency).toBe(1000);
  });
});

describe("SageMaker's scaling", () => {
  const scalable = variant(one, {
    endpoint: { minInstances: 1, maxInstances: 10, routing: "random", queueSize: 100 },
    intake: { batchSize: 1, maxConcurrency: 40 },
  });

  it("scales out on concurrent requests after three 10-second datapoints, instances in service minutes later", () => {
    const shape = variant(scalable, {
      policies: [
        {
          kind: "target",
          name: "concurrency",
          metric: "concurrentRequestsPerModel",
          target: 2,
          periodSeconds: 10,
          scaleOutCooldown: 60,
          scaleInCooldown: 600,
          disableScaleIn: false,
        },
      ],
    });
    const result = run(shape, 5, 900);
    const first = result.scaleEvents[0]!;
    expect(first.at).toBeLessThanOrEqual(40);
    expect(first.to).toBeGreaterThan(first.from);
    const minute = (m: number) => result.minutes[m - 1]!;
    expect(minute(2).inService).toBe(1);
    expect(minute(2).starting).toBeGreaterThan(0);
    expect(minute(7).inService).toBeGreaterThan(1);
  });

  it("acts on a step policy while its alarm on the oldest message's age is in ALARM", () => {
    const shape = variant(scalable, {
      policies: [
        {
          kind: "step",
          name: "age",
          alarm: {
            metric: "oldestMessageAge",
            threshold: 120,
            comparison: "above",
            periodSeconds: 60,
            evaluationPeriods: 1,
            datapointsToAlarm: 1,
          },
          adjustmentType: "ChangeInCapacity",
          steps: [{ lower: 0, upper: undefined, adjustment: 3 }],
          cooldown: 60,
        },
      ],
    });
    const result = run(shape, 3, 1200);
    expect(result.scaleEvents.length).toBeGreaterThan(0);
    for (const event of result.scaleEvents) expect(event.to - event.from).toBeLessThanOrEqual(3);
    expect(result.peakInstances).toBeGreaterThanOrEqual(3);
  });
});

describe("serverless", () => {
  it("throttles calls past MaxConcurrency", () => {
    const shape = variant(one, {
      endpoint: {
        mode: "serverless",
        instanceType: undefined,
        initialInstances: 0,
        minInstances: 0,
        maxInstances: 2,
        serverless: { maxConcurrency: 2, memoryMiB: 4096 },
      },
      intake: { maxConcurrency: 4, visibilityTimeoutSeconds: 60 },
    });
    const result = run(shape, 3, 600);
    expect(result.refusals.throttled).toBeGreaterThan(100);
    expect(result.peakInstances).toBe(2);
  });
});

describe("the load", () => {
  it("draws Poisson arrivals at the rate, with a burst where asked", () => {
    const load = {
      ratePerSecond: 10,
      durationSeconds: 3600,
      burst: { factor: 5, startSeconds: 600, durationSeconds: 600 },
    };
    const times = arrivalTimes(load, new SeededRandom(3));
    expect(expectedArrivals(load)).toBe(10 * 3600 + 40 * 600);
    expect(Math.abs(times.length / expectedArrivals(load) - 1)).toBeLessThan(0.02);
    const inBurst = times.filter((t) => t >= 600 && t < 1200).length;
    expect(Math.abs(inBurst / 30_000 - 1)).toBeLessThan(0.03);
    expect([...times].every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true);
  });
});
