/**
 * Issue 24, build item 8, on the new template: a step from 1 to 100 items/s, with the maximum
 * instances raised by context (`-c maxInstanceCount=250`), dead-letters nothing and drains. It
 * synthesizes the stack as it is now, so it passes only once the stack scales on the work, its
 * decide function treats overload as no failure (issue 24's scaling and overload packages), and
 * its intake lets enough items be in flight to keep the instances that scaling adds busy (the
 * capacity follower raises its concurrency with the instances in service).
 */
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { instanceSecondsPerItem } from "../../infra/capacity/measured-times.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { intakeConcurrencyFor } from "../../shared/domain/fleet-reading.ts";
import { synthStack } from "../helpers/synth-stack.ts";

describe("the new template under a step from 1 to 100 items/s", () => {
  it("dead-letters 0 and drains", () => {
    const json = Template.fromStack(synthStack({ maxInstanceCount: 250 })).toJSON();
    // No container defaults: the template must set the admission queue and the deadline itself.
    const shape = readPipelineShape(json);
    expect(shape.overload, "the decide function should return overloaded items with a backoff").toBeDefined();
    expect(shape.policies.map((p) => (p.kind === "target" ? p.metric : p.alarm.metric))).toContain(
      "concurrentRequestsPerModel",
    );
    expect(shape.endpoint.maxInstances).toBe(250);
    const secondsPerItem = instanceSecondsPerItem(shape.endpoint.instanceType!, "fresh");
    // Little's law: 100 items/s decided at this many seconds each means this many items in flight,
    // which the capacity follower allows once the maximum is in service.
    const follower = shape.follower!;
    const inFlight =
      intakeConcurrencyFor(shape.endpoint.maxInstances, follower.concurrencyPerInstance) *
      shape.intake.batchSize;
    expect(
      inFlight,
      `the intake keeps at most ${inFlight} items in flight (MaximumConcurrency × batch size); 100 items/s at ${secondsPerItem} s each needs ${Math.ceil(100 * secondsPerItem)}`,
    ).toBeGreaterThanOrEqual(100 * secondsPerItem);
    const minutes = 120;
    const result = simulate({
      shape,
      load: {
        ratePerSecond: 1,
        durationSeconds: minutes * 60,
        burst: { factor: 100, startSeconds: 300, durationSeconds: (minutes - 5) * 60 },
      },
      secondsPerItem,
    });
    expect(result.deadLettered).toBe(0);
    // Drained: what waits at the end is under a minute of arrivals, a tenth of the peak backlog.
    const peak = Math.max(...result.minutes.map((m) => m.backlog));
    const last = result.minutes.at(-1)!;
    expect(last.backlog).toBeLessThan(100 * 60);
    expect(last.backlog).toBeLessThan(peak / 10);
    expect(result.arrived).toBe(result.decided + result.waiting);
  }, 300_000);
});
