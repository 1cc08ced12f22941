/**
 * The capacity model against queueing theory: built as an M/M/c queue (Poisson arrivals,
 * exponential service, c instances fed one item at a time from the intake queue), its waits
 * agree with Erlang's C formula. And a run is repeatable: the same seed gives the same run.
 */
import { describe, expect, it } from "vitest";
import { simulate } from "../../infra/capacity/simulate.ts";
import { queueingShape } from "../helpers/capacity-shapes.ts";
import { erlangC } from "../helpers/erlang-c.ts";

const secondsPerItem = 1.546;
const mu = 1 / secondsPerItem;

function mmc(servers: number, utilization: number, seconds: number, seed = 1) {
  const lambda = utilization * servers * mu;
  return simulate({
    shape: queueingShape(servers),
    load: { ratePerSecond: lambda, durationSeconds: seconds },
    secondsPerItem,
    service: "exponential",
    functionOverheadSeconds: 0,
    seed,
  });
}

describe("the capacity model as an M/M/c queue", () => {
  it.each([
    [1, 0.7],
    [4, 0.8],
  ])("agrees with Erlang C on %i instance(s) at %f utilization", (servers, utilization) => {
    // Three seeds pooled: one run's mean wait still wanders by a few percent at these loads.
    const runs = [1, 2, 3].map((seed) => mmc(servers, utilization, 200_000, seed));
    const theory = erlangC(utilization * servers * mu, mu, servers);
    const decided = runs.reduce((s, r) => s + r.decided, 0);
    const pooled = (pick: (r: (typeof runs)[number]) => number) =>
      runs.reduce((s, r) => s + pick(r) * r.decided, 0) / decided;
    expect(decided).toBeGreaterThan(250_000);
    expect(Math.abs(pooled((r) => r.waitedFraction) - theory.waitProbability)).toBeLessThan(0.01);
    expect(Math.abs(pooled((r) => r.meanQueueWaitSeconds) / theory.meanWait - 1)).toBeLessThan(0.04);
    expect(Math.abs(pooled((r) => r.meanSeconds) / theory.meanSojourn - 1)).toBeLessThan(0.02);
    expect(runs.every((r) => r.deadLettered === 0 && r.waiting < 50)).toBe(true);
  });

  it("repeats a run exactly for the same seed, and differs for another", () => {
    const a = mmc(4, 0.8, 5_000, 7);
    const b = mmc(4, 0.8, 5_000, 7);
    const c = mmc(4, 0.8, 5_000, 8);
    expect(b.meanSeconds).toBe(a.meanSeconds);
    expect(b.minutes).toEqual(a.minutes);
    expect(c.meanSeconds).not.toBe(a.meanSeconds);
  });
});

describe("Erlang C itself", () => {
  it("matches M/M/1 in closed form and a textbook M/M/2 value", () => {
    // M/M/1: P(wait) = rho, Wq = rho / (mu - lambda).
    const one = erlangC(0.5, 1, 1);
    expect(one.waitProbability).toBeCloseTo(0.5, 12);
    expect(one.meanWait).toBeCloseTo(1, 12);
    // M/M/2 with a = 1 (rho 0.5): C = 1/3.
    expect(erlangC(1, 1, 2).waitProbability).toBeCloseTo(1 / 3, 12);
    expect(() => erlangC(2, 1, 2)).toThrow(/unstable/);
  });
});
