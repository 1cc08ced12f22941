/**
 * The overload backoff: the wait grows with the receive count up to its ceiling, spread between
 * half and all of it, in whole seconds; and with the topology's numbers, overload alone reaches
 * the queues' backstop only after days, while neither it nor a crash loop outlasts the retention
 * (so an item is dead-lettered with its reason, never lost to expiry).
 */
import { describe, expect, it } from "vitest";
import {
  overloadCeilingSeconds,
  overloadVisibilitySeconds,
  shortestOverloadWaitSeconds,
} from "../../shared/domain/backoff/overload-backoff.ts";
import { DECIDE_QUEUES, INTAKE_VISIBILITY_SECONDS } from "../../shared/domain/topology.ts";

const schedule = { firstSeconds: 30, maxSeconds: 900 };
const DAY = 86_400;

describe("overload backoff", () => {
  it("doubles the ceiling with each receive up to the longest wait", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50, 10_000].map((n) => overloadCeilingSeconds(n, schedule))).toEqual([
      30, 60, 120, 240, 480, 900, 900, 900, 900,
    ]);
  });

  it("draws each wait between half and all of its ceiling, in whole seconds, never 0", () => {
    expect(overloadVisibilitySeconds(1, schedule, 0)).toBe(15);
    expect(overloadVisibilitySeconds(1, schedule, 0.999_999)).toBe(30);
    expect(overloadVisibilitySeconds(3, schedule, 0.5)).toBe(90);
    expect(overloadVisibilitySeconds(1, { firstSeconds: 1, maxSeconds: 1 }, 0)).toBe(1);
    for (let receive = 1; receive < 40; receive++) {
      const low = overloadVisibilitySeconds(receive, schedule, 0);
      const high = overloadVisibilitySeconds(receive + 1, schedule, 0);
      expect(high).toBeGreaterThanOrEqual(low);
    }
  });

  it("starts from the expected wait when a reading gives one, within the shortest first wait and the longest", () => {
    const withReading = { ...schedule, shortestFirstSeconds: 2 };
    // A nearly idle fleet: back in seconds, not the fixed 15 to 30.
    expect(overloadCeilingSeconds(1, withReading, 0.4)).toBe(2);
    expect(overloadVisibilitySeconds(1, withReading, 0, 0.4)).toBe(1);
    // Behind a backlog: about when its turn comes, then doubling.
    expect([1, 2, 3, 4].map((n) => overloadCeilingSeconds(n, withReading, 200))).toEqual([
      200, 400, 800, 900,
    ]);
    expect(overloadCeilingSeconds(1, withReading, 50_000)).toBe(900);
    // No reading: the fixed schedule; a schedule without a shortest first wait ignores readings.
    expect(overloadCeilingSeconds(1, withReading)).toBe(30);
    expect(overloadCeilingSeconds(1, schedule, 0.4)).toBe(30);
  });

  it("keeps SQS's 12-hour visibility limit whatever the schedule", () => {
    expect(overloadVisibilitySeconds(40, { firstSeconds: 60, maxSeconds: 100_000 }, 0.999_999)).toBe(43_200);
  });

  it("lets overload alone reach the backstop only after days, and nothing outlast the retention", () => {
    const backoff = DECIDE_QUEUES.overloadBackoff;
    const receives = DECIDE_QUEUES.maxReceiveCount;
    const retention = DECIDE_QUEUES.retentionDays * DAY;
    expect(shortestOverloadWaitSeconds(receives, backoff)).toBeGreaterThan(5 * DAY);
    let longest = 0;
    for (let receive = 1; receive < receives; receive++) longest += overloadCeilingSeconds(receive, backoff);
    expect(longest).toBeLessThan(retention);
    // A handler that crashes every time: every receive waits a whole visibility timeout.
    expect(receives * INTAKE_VISIBILITY_SECONDS).toBeLessThan(retention);
  });
});
