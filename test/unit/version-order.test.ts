/**
 * Version order at the record (issue 42, item 5): after an item was re-decided under policy
 * version 2 and actioned (`restrict@v2`), version 1's genuine "Decision Made" (a late delivery, a
 * replay, the local outbox's re-announcement at start) must not be applied: before, "Item
 * Actioned" went out as `restrict@v2` then `allow@v1`. Neither the auto-action, nor the outbox's
 * owed events, nor the local mode's re-announcement may act for an older version once a newer one
 * holds a decision; an older version is still applied while no newer one decided the item.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { publishLeftovers } from "../../infra/local/local-outbox.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { applyDecision } from "../../shared/use-cases/apply-decision.ts";
import { type DecisionMadeDetail, newerDecision } from "../../shared/use-cases/event-authority.ts";
import { sendOwedEvents } from "../../shared/use-cases/outbox.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";
import { REPO_ROOT } from "../helpers/models.ts";

const V1 = parsePolicy(
  JSON.parse(readFileSync(join(REPO_ROOT, "events", "policies", "content-moderation.v1.json"), "utf8")),
);
const policies = new PolicyRegistry([
  V1,
  parsePolicy({ ...V1, version: 2 }),
  parsePolicy({ ...V1, version: 3 }),
]);
const now = () => new Date(Date.UTC(2026, 11, 1, 12));

let store: InMemoryDecisionStore;
let published: PipelineEvent[];
const publisher = { publish: async (events: readonly PipelineEvent[]) => void published.push(...events) };
const deps = () => ({ store, publisher, policies, now });

beforeEach(() => {
  store = new InMemoryDecisionStore();
  published = [];
});

/** A decided record of `post-1` under `version`, as the decide path writes it. */
function decided(version: number, chosen: string, route: "auto" | "human" = "auto"): DecisionRecord {
  return {
    itemId: "post-1",
    policyId: V1.id,
    policyVersion: version,
    status: route === "auto" ? "auto_approved" : "pending_review",
    route,
    reason: route === "auto" ? "confident" : "below_threshold",
    chosen,
    distribution: { allow: 0.05, restrict: 0.9, remove: 0.03, out_of_scope: 0.02 },
    topProbability: 0.9,
    confidence: 0.9,
    modelSha256: "a".repeat(64),
    promptSha256: "b".repeat(64),
    createdAt: new Date(Date.UTC(2026, 11, 1, version)).toISOString(),
    updatedAt: new Date(Date.UTC(2026, 11, 1, version)).toISOString(),
    eventPublished: true,
  };
}

const genuine = (record: DecisionRecord) => eventFor(record).detail as unknown as DecisionMadeDetail;
const actioned = () =>
  published
    .filter((e) => e.detailType === DetailType.actioned)
    .map((e) => `${e.detail.action}@v${e.detail.policyVersion}`);

describe("an older version's event after a newer version decided the item", () => {
  it("is not applied: restrict@v2 stays the item's last action", async () => {
    const v1 = decided(1, "allow");
    const v2 = decided(2, "restrict");
    await store.create(v1);
    await store.create(v2);
    expect(await applyDecision(genuine(v2), deps())).toBe("actioned");
    // Version 1's genuine event arrives late (or is replayed).
    expect(await applyDecision(genuine(v1), deps())).toBe("superseded");
    expect(actioned()).toEqual(["content-moderation:restrict@v2"]);
    expect((await store.get(v1))?.status).toBe("auto_approved");
  });

  it("is not applied when the newer version is decided but not actioned yet, nor behind a rejected later one", async () => {
    const v1 = decided(1, "allow");
    await store.create(v1);
    await store.create(decided(2, "remove", "human"));
    await store.create({ ...decided(3, "allow"), status: "rejected", route: undefined });
    expect((await newerDecision(v1, { store, policies }))?.policyVersion).toBe(2);
    expect(await applyDecision(genuine(v1), deps())).toBe("superseded");
    expect(actioned()).toEqual([]);
  });

  it("is still applied while no newer version holds a decision (a rejected newer one does not count)", async () => {
    const v1 = decided(1, "allow");
    await store.create(v1);
    await store.create({ ...decided(2, "allow"), status: "rejected", route: undefined });
    expect(await applyDecision(genuine(v1), deps())).toBe("actioned");
    expect(actioned()).toEqual(["content-moderation:allow@v1"]);
  });

  it("finds the newer decision with GetItem alone: the auto-action's role may not Query the table", async () => {
    const v1 = decided(1, "allow");
    await store.create(v1);
    await store.create(decided(2, "restrict"));
    store.latest = async () => {
      throw new Error("AccessDeniedException: dynamodb:Query is not granted to the auto-action");
    };
    expect(await applyDecision(genuine(v1), deps())).toBe("superseded");
  });

  it("is not announced when the newer version is decided while the older one is being applied", async () => {
    const v1 = decided(1, "allow");
    await store.create(v1);
    // The newer decision lands between the check and the action's write.
    const transition = store.transition.bind(store);
    store.transition = async (...args: Parameters<typeof store.transition>) => {
      if (args[0].policyVersion === 1) await store.create(decided(2, "restrict"));
      return transition(...args);
    };
    expect(await applyDecision(genuine(v1), deps())).toBe("superseded");
    expect(actioned()).toEqual([]);
    // Redelivered, it is still not announced.
    expect(await applyDecision(genuine(v1), deps())).toBe("superseded");
    expect(actioned()).toEqual([]);
  });
});

describe("the outbox after a newer version decided the item", () => {
  const outboxDeps = () => ({
    ...deps(),
    publishLeaseMs: 60_000,
    timings: { claimMs: 300_000, changeWindowMs: 600_000 },
  });

  it("does not send an older version's owed Item Actioned after the newer one's", async () => {
    const v1 = decided(1, "allow");
    await store.create(v1);
    // Version 1 actioned, then a kill before its event; version 2 decided and actioned since.
    await store.transition(v1, "auto_approved", "actioned", {
      action: "content-moderation:allow",
      actionedAt: now().toISOString(),
      actionEventId: genuine(v1).eventId,
      actionEventPublished: false,
    });
    const v2 = decided(2, "restrict");
    await store.create(v2);
    await applyDecision(genuine(v2), deps());
    expect((await sendOwedEvents((await store.get(v1))!, outboxDeps())).sent).toEqual([]);
    expect(actioned()).toEqual(["content-moderation:restrict@v2"]);
  });

  it("does not announce again at the local mode's start an older decision whose effect never happened", async () => {
    const v1 = decided(1, "allow");
    const v2 = decided(2, "restrict");
    await store.create(v1);
    await store.create(v2);
    await applyDecision(genuine(v2), deps());
    published = [];
    await publishLeftovers({ store, policies, publisher, now }, [(await store.get(v1))!]);
    expect(published).toEqual([]);
    // Without a newer decision, it is announced again as before.
    await publishLeftovers({ store, policies, publisher, now }, [{ ...v1, itemId: "post-2" }]);
    expect(published.map((e) => e.detail.itemId)).toEqual(["post-2"]);
  });
});
