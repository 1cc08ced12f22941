/**
 * The handlers' lazy start (`functions/support/lazy.ts`): one start shared by every invocation of an
 * execution environment, and a failed start forgotten, so a cold start that met a passing fault
 * does not fail every later invocation.
 */
import { describe, expect, it } from "vitest";
import { createDriftHandler } from "../../functions/drift.ts";
import { lazy } from "../../functions/support/lazy.ts";

describe("lazy", () => {
  it("starts once and shares the result", async () => {
    let starts = 0;
    const get = lazy(async () => ++starts);
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1]);
    expect(await get()).toBe(1);
    expect(starts).toBe(1);
  });

  it("forgets a rejected start, so the next call starts again", async () => {
    let starts = 0;
    const get = lazy(async () => {
      starts++;
      if (starts === 1) throw new Error("throttled at cold start");
      return "ready";
    });
    await expect(get()).rejects.toThrow("throttled at cold start");
    expect(await get()).toBe("ready");
    expect(await get()).toBe("ready");
    expect(starts).toBe(2);
  });

  it("lets a handler whose first start failed serve its next invocation", async () => {
    let starts = 0;
    const handler = createDriftHandler(async () => {
      starts++;
      throw new Error(`start ${starts} failed`);
    });
    const event = {
      version: "0",
      id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
      "detail-type": "Scheduled Event",
      source: "aws.events",
      account: "123456789012",
      time: "2032-01-01T00:00:00Z",
      region: "us-east-1",
      resources: ["arn:aws:events:us-east-1:123456789012:rule/drift"],
      detail: {},
    } as Parameters<typeof handler>[0];
    const context = { functionName: "drift", getRemainingTimeInMillis: () => 60_000 } as Parameters<
      typeof handler
    >[1];
    await expect(handler(event, context)).rejects.toThrow("start 1 failed");
    // Before the fix the second invocation met the first start's rejection again.
    await expect(handler(event, context)).rejects.toThrow("start 2 failed");
    expect(starts).toBe(2);
  });
});
