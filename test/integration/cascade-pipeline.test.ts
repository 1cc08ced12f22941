/**
 * A cascade on the real local services: the sample moderation policy asks the demo model, then
 * `demo-large` for what the first passes on (events/policies/content-moderation.v1.json). Its
 * held-back items, each sent twice, go through SQS, the decide function, DynamoDB Local and the
 * local bus with both models on the real endpoint: each item is decided once and routed once,
 * a passed-on item's record holds both tiers' distributions with each model's hash, and its
 * "Decision Made" names the tier whose answer it carries; the second tier acts on some items
 * the first sent on.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { passesOn, tierPolicy } from "../../shared/domain/cascade.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { Item } from "../../shared/domain/item.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { type LocalPipeline, sendBodies, startLocalPipeline } from "../helpers/local-pipeline.ts";
import { demoLargeModelPath, demoModelPath, REPO_ROOT } from "../helpers/models.ts";
import { type Budgets, budgetsFor, measureLatency, waitForProgress } from "../helpers/progress.ts";

let pipeline: LocalPipeline;
let budgets: Budgets;
let items: Item[];

beforeAll(async () => {
  items = (await readFile(join(REPO_ROOT, "events", "items", "demo-heldout.jsonl"), "utf8"))
    .split("\n")
    .filter((line) => line.includes('"content-moderation"'))
    .map((line, i) => {
      const { policy, state } = JSON.parse(line) as Item;
      return { id: `POST-${i}`, policy, state };
    });
  const policy = (await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"))).current(
    "content-moderation",
  )!;
  pipeline = await startLocalPipeline({
    model: await demoModelPath(),
    tierModel: await demoLargeModelPath(),
    endpointUrl: async (real) => {
      // Budgets from the slower model's latency under the load of now: a call of ten items to it
      // may wait behind another.
      const probe = systemOneRequest(items[0]!, tierPolicy(policy, 1));
      budgets = budgetsFor(await measureLatency(`${real}/invocations`, probe, 4), { concurrentRequests: 20 });
      return real;
    },
    endpointTimeoutMs: () => budgets.endpointTimeoutMs,
    endpointAttempts: () => budgets.endpointAttempts,
    visibilityTimeoutSeconds: () => budgets.visibilityTimeoutSeconds,
    publishLeaseMs: () => budgets.publishLeaseMs,
  });
}, 600_000);

afterAll(async () => {
  await pipeline?.stop();
});

describe("a cascade on the local services", () => {
  it("decides each item once through the tiers, keeping both answers and naming the acting tier", async () => {
    const bodies = items.map((item) => JSON.stringify(item));
    // Every item twice: SQS delivers at least once, and upstream systems resend.
    await sendBodies(pipeline.intake, [...bodies, ...bodies]);
    const where = () => `${pipeline.bus.events.length} events on the bus`;
    await waitForProgress("the intake queue", () => pipeline.depth(pipeline.intake), budgets, where);
    await pipeline.bus.idle();
    await waitForProgress("the review queue", () => pipeline.depth(pipeline.reviewQueue), budgets, where);
    await waitForProgress(
      "the auto-action queue",
      () => pipeline.depth(pipeline.autoActionQueue),
      budgets,
      where,
    );

    const made = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made");
    expect(made.map((e) => e.detail.itemId).sort()).toEqual(items.map((i) => i.id).sort());
    const policy = pipeline.deps.policies.current("content-moderation")!;
    const byTier = { first: 0, second: 0, secondActed: 0 };
    for (const item of items) {
      const record = (await pipeline.deps.store.get({
        itemId: item.id,
        policyId: policy.id,
        policyVersion: policy.version,
      }))!;
      const event = made.find((e) => e.detail.itemId === item.id)!.detail;
      const tiers = record.tiers!;
      expect(event.tier, item.id).toEqual({
        index: tiers.length,
        ...(tiers.at(-1)!.model ? { model: tiers.at(-1)!.model } : {}),
      });
      expect(event.route).toBe(record.route);
      // The record's own answer is the acting tier's.
      expect(record.modelSha256).toBe(tiers.at(-1)!.modelSha256);
      expect(record.chosen).toBe(tiers.at(-1)!.chosen);
      for (const answer of tiers) {
        expect(Object.keys(answer.distribution).sort()).toEqual(policy.options.map((o) => o.id).sort());
        expect(Object.values(answer.distribution).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
        expect(answer.promptSha256).toMatch(/^[0-9a-f]{64}$/);
      }
      if (tiers.length === 1) {
        byTier.first++;
        expect(passesOn(tiers[0]!.reason), item.id).toBe(false);
        continue;
      }
      byTier.second++;
      expect(tiers).toHaveLength(2);
      expect(passesOn(tiers[0]!.reason), item.id).toBe(true);
      expect(tiers.map((t) => t.model)).toEqual([undefined, "demo-large"]);
      expect(tiers[1]!.modelSha256).not.toBe(tiers[0]!.modelSha256);
      if (record.route === "auto") byTier.secondActed++;
    }
    // Effects once per item: each automatic decision actioned once, each escalation queued once.
    for (const item of items) {
      const acted = pipeline.effects.actioned.get(item.id) ?? 0;
      const queued = pipeline.effects.queued.get(item.id) ?? 0;
      expect(acted + queued, item.id).toBe(1);
    }
    expect(byTier.first).toBeGreaterThan(0);
    expect(byTier.second).toBeGreaterThan(0);
    expect(byTier.secondActed, "the second tier acts on items the first passed on").toBeGreaterThan(0);
  });
});
