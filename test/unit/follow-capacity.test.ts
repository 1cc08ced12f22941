/**
 * The capacity follower's period, on fakes of its ports (SageMaker's and Lambda's control planes
 * have no stand-in here; the readings item is also tested on DynamoDB Local): the intake's
 * concurrency follows the instances in service and is set only when it changes, the reading is
 * recorded, and the handler publishes the figures scaling and the rollback alarms read. The
 * decide side reads the reading at most once per refresh, and a failed read falls back to the
 * fixed schedule instead of failing.
 */
import { describe, expect, it } from "vitest";
import { createFollowCapacityHandler } from "../../functions/follow-capacity.ts";
import type { FleetCounts, FleetReading } from "../../shared/domain/fleet-reading.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import { expectedWaitFrom } from "../../shared/use-cases/expected-wait.ts";
import { type FollowCapacityDependencies, followCapacity } from "../../shared/use-cases/follow-capacity.ts";

function fakes(counts: FleetCounts, depth = { visible: 300, inFlight: 60 }, current?: number) {
  const sets: number[] = [];
  const recorded: FleetReading[] = [];
  let maximum = current;
  const deps: FollowCapacityDependencies = {
    fleet: { counts: async () => counts },
    intake: { depth: async () => depth },
    mapping: {
      current: async () => maximum,
      set: async (n) => {
        sets.push(n);
        maximum = n;
      },
    },
    readings: { record: async (r) => void recorded.push(r) },
    secondsPerItem: 1.5,
    now: () => new Date(1_000),
  };
  return { deps, sets, recorded };
}

describe("the capacity follower", () => {
  it("sets the intake's concurrency to what the instances in service admit, once", async () => {
    const { deps, sets, recorded } = fakes({ inService: 4, desired: 6, baking: false }, undefined, 42);
    const followed = await followCapacity(deps);
    expect(sets).toEqual([6]);
    expect(followed).toMatchObject({
      concurrency: 6,
      previousConcurrency: 42,
      backlogPerInstance: 60,
      expectedWaitSeconds: 112.5,
      baking: false,
    });
    expect(recorded).toEqual([
      { instances: 4, desiredInstances: 6, visible: 300, inFlight: 60, secondsPerItem: 1.5, at: 1_000 },
    ]);
    // The next period finds it set: no control-plane write.
    await followCapacity(deps);
    expect(sets).toEqual([6]);
  });

  it("publishes backlog per instance, instances, expected wait, concurrency and the baking flag", async () => {
    const { deps } = fakes({ inService: 2, desired: 2, baking: true });
    const published: Record<string, number> = {};
    const metrics = {
      addMetric: (name: string, _unit: string, value: number) => {
        published[name] = value;
      },
      publishStoredMetrics: () => undefined,
      setThrowOnEmptyMetrics: () => undefined,
      captureColdStartMetric: () => undefined,
    };
    const handler = createFollowCapacityHandler(
      async () => deps,
      metrics as unknown as Parameters<typeof createFollowCapacityHandler>[1],
    );
    await handler({}, {} as never);
    const names = METRICS.follower;
    expect(published).toEqual({
      [names.backlogPerInstance]: 180,
      [names.instancesInService]: 2,
      [names.expectedWaitSeconds]: 225,
      [names.intakeConcurrency]: 3,
      [names.deploymentBaking]: 1,
    });
  });
});

describe("the expected wait the decide function reads", () => {
  const reading: FleetReading = {
    instances: 2,
    desiredInstances: 2,
    visible: 40,
    inFlight: 0,
    secondsPerItem: 1.5,
    at: 0,
  };

  it("reads the table at most once per refresh, and ignores a stale reading", async () => {
    let reads = 0;
    let now = 0;
    const wait = expectedWaitFrom(
      {
        latest: async () => {
          reads++;
          return reading;
        },
      },
      () => new Date(now),
      10_000,
    );
    expect(await wait()).toBe(30);
    now = 9_999;
    expect(await wait()).toBe(30);
    expect(reads).toBe(1);
    now = 400_000;
    expect(await wait()).toBeUndefined();
    expect(reads).toBe(2);
  });

  it("falls back to no expected wait when the reading cannot be read", async () => {
    const wait = expectedWaitFrom(
      { latest: async () => Promise.reject(new Error("throttled")) },
      () => new Date(0),
    );
    expect(await wait()).toBeUndefined();
  });
});
