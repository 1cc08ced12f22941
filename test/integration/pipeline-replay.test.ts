/**
 * Replaying the dead-letter queue on real local services: a dry run lists without moving, the
 * filters select by policy and noted failure reason, the filtered re-send and SQS's own redrive
 * (StartMessageMoveTask) bring items back after the fix, and an already decided item is not
 * decided or routed again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redriveAll } from "../../shared/adapters/sqs-queue.ts";
import { homeQueue, replayFiltered } from "../../shared/use-cases/replay.ts";
import { type FaultProxy, startFaultProxy } from "../helpers/fault-proxy.ts";
import { type LocalPipeline, sendBodies, startLocalPipeline } from "../helpers/local-pipeline.ts";

let proxy: FaultProxy;
let pipeline: LocalPipeline;

beforeAll(async () => {
  pipeline = await startLocalPipeline({
    maxItemFailures: 2,
    visibilityTimeoutSeconds: 1,
    endpointUrl: async (real) => {
      proxy = await startFaultProxy(real, 0, 0);
      return proxy.url;
    },
  });
}, 120_000);
afterAll(async () => {
  await pipeline?.stop();
  await proxy?.stop();
});

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const made = (id: string) =>
  pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made" && e.detail.itemId === id).length;

describe("replay", () => {
  it("lists, filters and replays dead letters after a fix, never deciding twice", async () => {
    const items = [
      { id: "R-T1", policy: "ticket-routing", state: "POISON ticket one" },
      { id: "R-T2", policy: "ticket-routing", state: "POISON ticket two" },
      { id: "R-T3", policy: "ticket-routing", state: "POISON ticket three" },
      { id: "R-M1", policy: "content-moderation", state: "POISON post one" },
      { id: "R-M2", policy: "content-moderation", state: "POISON post two" },
    ];
    await sendBodies(
      pipeline.intake,
      items.map((item) => JSON.stringify(item)),
    );
    await until(
      async () =>
        (await pipeline.depth(pipeline.deadLetters)) === 5 && (await pipeline.depth(pipeline.intake)) === 0,
    );

    const failureOf = (id: string) => pipeline.deps.store.failureOf(id);
    const base = { deadLetters: pipeline.deadLetters, sendHome: homeQueue(pipeline.intake), failureOf };
    const dry = await replayFiltered({ ...base, filter: { policy: "content-moderation" }, dryRun: true });
    expect(dry.matched.map((m) => m.itemId).sort()).toEqual(["R-M1", "R-M2"]);
    expect(dry.moved).toBe(0);
    expect(dry.matched[0]!.reason).toMatch(/EndpointUnavailableError/);
    expect(await pipeline.depth(pipeline.deadLetters)).toBe(5);
    const byReason = await replayFiltered({
      ...base,
      filter: { reason: "endpointunavailable" },
      dryRun: true,
    });
    expect(byReason.matched).toHaveLength(5);
    const none = await replayFiltered({ ...base, filter: { olderThanMs: 3_600_000 }, dryRun: true });
    expect(none.matched).toHaveLength(0);

    // decide status sees the five dead letters and why they failed.
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const { join } = await import("node:path");
    const { REPO_ROOT } = await import("../helpers/models.ts");
    const status = await promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, "bin", "decide.js"),
        "status",
        "--queue-url",
        pipeline.intake.url,
        "--dlq-url",
        pipeline.deadLetters.url,
        "--json",
      ],
      { cwd: REPO_ROOT, env: { ...process.env, ...pipeline.env } },
    );
    const report = JSON.parse(status.stdout) as {
      queues: Record<string, { visible: number }>;
      deadLetters: Record<string, number>;
    };
    expect(report.queues["dead-letter"]!.visible).toBe(5);
    expect(report.deadLetters).toEqual({ EndpointUnavailableError: 5 });

    proxy.setPoison(false); // the fix
    const filtered = await replayFiltered({
      ...base,
      filter: { policy: "content-moderation" },
      dryRun: false,
    });
    expect(filtered.moved).toBe(2);
    await until(async () => made("R-M1") === 1 && made("R-M2") === 1);
    expect(await pipeline.depth(pipeline.deadLetters)).toBe(3);

    // An item that was already decided, dead-lettered again (say by an operator's mistake). It has
    // no source queue, so the redrive names its destination.
    await pipeline.deadLetters.send(JSON.stringify(items[3]));
    const handle = await redriveAll(
      pipeline.deadLetters.sqs,
      "arn:aws:sqs:us-east-1:123456789012:intake-dlq",
      "arn:aws:sqs:us-east-1:123456789012:intake",
    );
    expect(handle).toBeTruthy();
    await until(
      async () =>
        ["R-T1", "R-T2", "R-T3"].every((id) => made(id) === 1) &&
        (await pipeline.depth(pipeline.intake)) === 0,
    );
    await pipeline.bus.idle();
    expect(await pipeline.depth(pipeline.deadLetters)).toBe(0);
    for (const item of items) expect(made(item.id)).toBe(1);
  });
});
