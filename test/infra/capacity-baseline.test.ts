/**
 * The capacity model on today's template (trimmed into test/fixtures/ from the synthesized stack
 * at commit 42c08fb, so it stays put while the stack changes): the reader finds what decides
 * capacity, and the simulation reproduces what issue 24 observed. Observation 2: target tracking
 * on invocations per instance cannot see healthy load (a busy instance makes a few batched calls
 * a minute); it fires only once timed-out batched calls are retried one item per call.
 * Observation 3: eight concurrent batches of ten against one instance are mostly refused, and
 * while the endpoint stays at its minimum a 10x burst ends in dead letters. Observation 4:
 * serverless mode sends more concurrent calls than MaxConcurrency, so it throttles.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { instanceSecondsPerItem, serverlessSecondsPerItem } from "../../infra/capacity/measured-times.ts";
import type { PipelineShape } from "../../infra/capacity/shape.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { variant } from "../helpers/capacity-shapes.ts";
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
  it("observation 2: a saturated instance makes a few calls a minute, so healthy load never reaches the target", () => {
    // One batch at a time (no overload): the instance is nearly always busy on full batches.
    const healthy = variant(realtime, { intake: { maxConcurrency: 1 } });
    const result = run(healthy, 0.62, 60);
    expect(result.refusals).toEqual({ queueFull: 0, deadline: 0, throttled: 0, timeout: 0 });
    expect((result.decided * fresh) / 3600).toBeGreaterThan(0.9);
    expect(Math.max(...result.datapoints.map((d) => d.value))).toBeLessThan(30);
    expect(result.scaleEvents).toEqual([]);
  });

  it("observation 2: on the template as it is, the first scale-out comes only after refusals and retries", () => {
    // 2 items/s: more than one instance's 0.65, less than the four instances' 2.6.
    const result = run(realtime, 2, 30);
    const first = result.scaleEvents[0]!;
    expect(first.from).toBe(1);
    // Three datapoints above 30 calls a minute: the single-item retries of timed-out batched calls.
    expect(result.minutes[0]!.refusals).toBeGreaterThan(0);
    expect(first.at).toBeGreaterThanOrEqual(180);
    expect(result.refusals.timeout).toBeGreaterThan(0);
  });

  it("observation 3: eighty items in flight against the minimum instance are mostly refused", () => {
    const result = run(realtime, 0.5, 120, { factor: 10, minutes: 10 });
    expect(result.peakConcurrency).toBe(8);
    // From the burst until the instances the retries asked for are in service.
    const alone = result.minutes.filter((m) => m.minute > 5 && m.inService === 1 && m.minute < 20);
    expect(alone.length).toBeGreaterThan(4);
    const refused = alone.reduce((s, m) => s + m.refusals, 0);
    const decided = alone.reduce((s, m) => s + m.decided, 0);
    expect(refused).toBeGreaterThan(20 * decided);
    // The burst turns into a backlog of nearly half an hour at the 99th percentile.
    expect(result.p99Seconds).toBeGreaterThan(1200);
    expect(result.arrived).toBe(result.decided + result.waiting + result.deadLettered);
  });

  it("observation 3: while the endpoint stays at its minimum, a 10x burst dead-letters after five receives", () => {
    // What the template does when its policy does not fire (observation 2): one instance for the hour.
    const unscaled = variant(realtime, { policies: [] });
    const result = run(unscaled, 0.5, 120, { factor: 10, minutes: 10 });
    expect(result.deadLettered).toBeGreaterThan(result.arrived / 3);
    expect(result.receives[5]).toBeGreaterThan(result.deadLettered * 0.9);
    // Five receives, each followed by the 720 s visibility timeout: an hour after the burst began.
    const firstDead = result.minutes.find((m) => m.deadLettered > 0)!;
    expect(firstDead.minute).toBeGreaterThanOrEqual(5 + 60);
  });

  it("observation 4: serverless mode sends 10 + 2 concurrent batches at MaxConcurrency 5, and is throttled", () => {
    const result = run(serverless, 2, 30);
    expect(result.peakConcurrency).toBeGreaterThan(5);
    expect(result.refusals.throttled).toBeGreaterThan(0);
    expect(result.peakInstances).toBe(5);
  });
});
