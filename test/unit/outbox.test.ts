/**
 * The outbox (`shared/use-cases/outbox.ts`): a record whose change was written but whose event did
 * not go out (a crash, a SIGKILL of the local mode) owes that event, and sending owed events sends
 * each once, the decision event only under the publish lease. Before, the local mode's restart
 * re-sent decision events only, so an "Item Actioned" lost in a kill was never sent.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { owedEvents, sendOwedEvents } from "../../shared/use-cases/outbox.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const base: DecisionRecord = {
  itemId: "OUTBOX-1",
  policyId: TEAMS_POLICY.id,
  policyVersion: 1,
  status: "auto_approved",
  route: "auto",
  reason: "confident",
  chosen: "billing",
  distribution: { billing: 0.95, technical: 0.05 },
  topProbability: 0.95,
  confidence: 0.95,
  modelSha256: "a".repeat(64),
  promptSha256: "b".repeat(64),
  state: "charged twice",
  createdAt: "2032-01-01T00:00:00.000Z",
  updatedAt: "2032-01-01T00:00:00.000Z",
  eventPublished: true,
};

function setup(now: Date) {
  const store = new InMemoryDecisionStore();
  const events: PipelineEvent[] = [];
  const deps = {
    store,
    publisher: { publish: async (sent: readonly PipelineEvent[]) => void events.push(...sent) },
    policies: new PolicyRegistry([TEAMS_POLICY]),
    publishLeaseMs: 60_000,
    now: () => now,
    timings: { claimMs: 300_000, changeWindowMs: 600_000 },
  };
  return { store, events, deps };
}

describe("the outbox", () => {
  it("sends an Item Actioned that was written but never sent, once", async () => {
    const { store, events, deps } = setup(new Date("2032-01-01T00:01:00Z"));
    await store.create(base);
    // The auto-action target's write, then a kill before its event.
    await store.transition(base, "auto_approved", "actioned", {
      action: "tickets:billing",
      actionedAt: "2032-01-01T00:00:30.000Z",
      actionEventId: "made-event-1",
      actionEventPublished: false,
    });
    const record = (await store.get(base))!;
    expect(owedEvents(record)).toEqual(["Item Actioned"]);
    expect((await sendOwedEvents(record, deps)).sent).toEqual(["Item Actioned"]);
    expect(events.map((e) => [e.detailType, e.detail.causedBy])).toEqual([["Item Actioned", "made-event-1"]]);
    const after = (await store.get(base))!;
    expect(owedEvents(after)).toEqual([]);
    expect((await sendOwedEvents(after, deps)).sent).toEqual([]);
    expect(events).toHaveLength(1);
  });

  it("sends a decision event only under its lease: not while the last run holds it, then once", async () => {
    const start = Date.parse("2032-01-01T00:00:00Z");
    const record = { ...base, itemId: "OUTBOX-2", eventPublished: false };
    const early = setup(new Date(start + 1_000));
    await early.store.create(record, start + 60_000);
    const held = await sendOwedEvents(record, early.deps);
    expect(held).toEqual({ sent: [], leaseHeld: true });
    expect(early.events).toHaveLength(0);
    const later = { ...early.deps, now: () => new Date(start + 61_000) };
    expect(await sendOwedEvents(record, later)).toEqual({ sent: ["Decision Made"], leaseHeld: false });
    expect(early.events.map((e) => e.detailType)).toEqual(["Decision Made"]);
    expect((await early.store.get(record))!.eventPublished).toBe(true);
  });
});
