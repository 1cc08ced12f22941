/**
 * The capacity model on today's template (trimmed into test/fixtures/ from the synthesized stack
 * at commit 42c08fb, so it stays put while the stack changes): the reader finds what decides
 * capacity, and the simulation reproduces what issue 24 observed. Observation 2: target
 * tracking on invocations per instance never fires on a load four instances could serve, since
 * one batched call carries ten items. Observation 3: the intake's eight concurrent batches against
 * one instance at minimum capacity meet the 23 s deadline, and a 10x burst ends in dead letters.
 * Observation 4: serverless mode sends more concurrent calls than MaxConcurrency, so it throttles.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  instanceSecondsPerItem,
  serverlessSecondsPerItem,
} from "../../shared/domain/capacity/measured-times.ts";
import type { PipelineShape } from "../../shared/domain/capacity/shape.ts";
import { simulate } from "../../shared/domain/capacity/simulate.ts";
import { readPipelineShape } from "../../shared/domain/capacity/template-reader.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** The container's defaults in force when the template set no queue size (endpoint/server/config.ts). */
const containerDefaults = { queueSize: 16, deadlineSeconds: 60 };
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, "test", "fixtures", name), "utf8")) as unknown;
const realtime = readPipelineShape(fixture("capacity-baseline.template.json"), { containerDefaults });
const serverless = readPipelineShape(fixture("capacity-baseline-serverless.template.json"), {
  containerDefaults,
});
const fresh = instanceSecondsPerItem("ml.c6i.xlarge", "fresh");

function run(
  shape: PipelineShape,
  rate: number,
  minutes: number,
  burst?: { factor: number; minutes: number },
) {
  return simulate({
    shape,
    load: {
      ratePerSecond: rate,
      durationSeconds: minutes * 60,
      ...(burst
        ? { burst: { factor: burst.factor, startSeconds: 300, durationSeconds: burst.minutes * 60 } }
        : {}),
    },
    secondsPerItem: shape.endpoint.mode === "serverless" ? serverlessSecondsPerItem(4096, "fresh") : fresh,
  });
}

describe("today's template, as the capacity model reads it", () => {
  it("finds the endpoint, its scaling, the decide function and its two lanes", () => {
    expect(realtime.endpoint).toMatchObject({
      mode: "realtime",
      instanceType: "ml.c6i.xlarge",
      initialInstances: 1,
      minInstances: 1,
      maxInstances: 4,
      queueSize: 16,
      deadlineSeconds: 23,
      routing: "random",
    });
    expect(realtime.policies).toEqual([
      expect.objectContaining({
        kind: "target",
        metric: "invocationsPerInstance",
        target: 30,
        scaleOutCooldown: 300,
      }),
    ]);
    expect(realtime.intake).toEqual({
      batchSize: 10,
      batchingWindowSeconds: 1,
      maxConcurrency: 8,
      visibilityTimeoutSeconds: 720,
      maxReceiveCount: 5,
    });
    expect(realtime.batch?.maxConcurrency).toBe(2);
    expect(realtime.decide).toMatchObject({
      timeoutSeconds: 120,
      endpointTimeoutSeconds: 25,
      endpointAttempts: 3,
    });
    expect(realtime.overload).toBeUndefined();
    expect(serverless.endpoint).toMatchObject({
      mode: "serverless",
      maxInstances: 5,
      serverless: { maxConcurrency: 5, memoryMiB: 4096 },
    });
    expect(serverless.intake.maxConcurrency).toBe(10);
    expect(serverless.decide).toMatchObject({ endpointTimeoutSeconds: 55, endpointAttempts: 2 });
  });
});

describe("today's template under load (issue 24)", () => {
  it("observation 2: never scales out on a load its four instances could serve", () => {
    // 2 items/s is under the 4 × 0.65 items/s the maximum would serve, over one instance's 0.65.
    const result = run(realtime, 2, 30);
    expect(result.scaleEvents).toEqual([]);
    expect(result.peakInstances).toBe(1);
    const perMinute = result.datapoints.map((d) => d.value);
    expect(perMinute.length).toBe(30);
    // Ten items a call: the instance is saturated far below 30 calls a minute.
    expect(Math.max(...perMinute)).toBeLessThan(30);
    expect(result.refusals.deadline).toBeGreaterThan(result.decided);
    expect(result.waiting).toBeGreaterThan(result.decided);
  });

  it("observation 3: eight batches of ten against one instance miss the deadline, and a 10x burst dead-letters", () => {
    const result = run(realtime, 0.5, 120, { factor: 10, minutes: 10 });
    expect(result.peakConcurrency).toBe(8);
    expect(result.peakInstances).toBe(1);
    expect(result.refusals.deadline).toBeGreaterThan(2 * result.decided);
    expect(result.deadLettered).toBeGreaterThan(0);
    // Five receives, each followed by the 720 s visibility timeout: an hour after the burst began.
    const firstDead = result.minutes.find((m) => m.deadLettered > 0)!;
    expect(firstDead.minute).toBeGreaterThanOrEqual(5 + 60);
    expect(result.arrived).toBe(result.decided + result.waiting + result.deadLettered);
  });

  it("observation 4: serverless mode sends 10 + 2 concurrent batches at MaxConcurrency 5, and is throttled", () => {
    const result = run(serverless, 2, 30);
    expect(result.peakConcurrency).toBeGreaterThan(5);
    expect(result.refusals.throttled).toBeGreaterThan(0);
    expect(result.peakInstances).toBe(5);
  });
});
