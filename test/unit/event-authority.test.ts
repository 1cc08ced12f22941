/**
 * The record is the authority for an effect: the auto-action and the review intake apply only
 * the event their decision record stands for, and the auto-action only an option the record's
 * policy version automates. Each forged "Decision Made" of the attacker's probe (issue 36: an
 * `allow` record actioned as `remove`) is refused here, on the in-memory store.
 */
import { join } from "node:path";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { EventRecordMismatchError } from "../../shared/domain/errors.ts";
import {
  DetailType,
  eventIdOf,
  type PipelineEvent,
  type PublishesEvents,
} from "../../shared/domain/events.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { applyDecision } from "../../shared/use-cases/apply-decision.ts";
import type { DecisionMadeDetail } from "../../shared/use-cases/event-authority.ts";
import { queueForReview } from "../../shared/use-cases/queue-for-review.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";
import { REPO_ROOT } from "../helpers/models.ts";

let policies: PolicyRegistry;
let store: InMemoryDecisionStore;
let published: PipelineEvent[];
const publisher: PublishesEvents = { publish: async (events) => void published.push(...events) };
const now = () => new Date(Date.UTC(2026, 11, 1));

beforeAll(async () => {
  policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
});

beforeEach(() => {
  store = new InMemoryDecisionStore();
  published = [];
});

/** A decided content-moderation record, as the decide path writes it. */
function record(itemId: string, route: "auto" | "human", chosen: string): DecisionRecord {
  return {
    itemId,
    policyId: "content-moderation",
    policyVersion: 1,
    status: route === "auto" ? "auto_approved" : "pending_review",
    route,
    reason: route === "auto" ? "confident" : "below_threshold",
    chosen,
    distribution: { allow: 0.05, restrict: 0.02, remove: 0.03, out_of_scope: 0.9 },
    topProbability: 0.9,
    confidence: 0.87,
    modelSha256: "a".repeat(64),
    promptSha256: "b".repeat(64),
    createdAt: now().toISOString(),
    updatedAt: now().toISOString(),
    eventPublished: true,
  };
}

/** The "Decision Made" detail the record stands for. */
const genuine = (r: DecisionRecord) => eventFor(r).detail as unknown as DecisionMadeDetail;
const deps = () => ({ store, publisher, policies, now });

async function refusal(run: Promise<unknown>): Promise<EventRecordMismatchError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EventRecordMismatchError);
  return error as EventRecordMismatchError;
}

describe("the auto-action applies only what the record says", () => {
  it("applies the record's own choice for its genuine event, once", async () => {
    const allowed = record("post-1", "auto", "allow");
    await store.create(allowed);
    expect(await applyDecision(genuine(allowed), deps())).toBe("actioned");
    expect(await applyDecision(genuine(allowed), deps())).toBe("already_actioned");
    expect((await store.get(allowed))?.action).toBe("content-moderation:allow");
    expect(published.filter((e) => e.detailType === DetailType.actioned)).toHaveLength(1);
  });

  it("refuses a forged event that names another option under the genuine event id", async () => {
    const allowed = record("post-2", "auto", "allow");
    await store.create(allowed);
    const forged = { ...genuine(allowed), chosen: "remove" };
    const error = await refusal(applyDecision(forged, deps()));
    expect(error.event.chosen).toBe("remove");
    expect(error.record.chosen).toBe("allow");
    expect(error.message).toMatch(/chosen differ/);
    expect((await store.get(allowed))?.status).toBe("auto_approved");
    expect(published).toHaveLength(0);
    // The genuine event still applies afterwards, with the record's choice.
    expect(await applyDecision(genuine(allowed), deps())).toBe("actioned");
    expect((await store.get(allowed))?.action).toBe("content-moderation:allow");
  });

  it("refuses a forged event with an event id of its own", async () => {
    const allowed = record("post-3", "auto", "allow");
    await store.create(allowed);
    const forged = { ...genuine(allowed), chosen: "restrict", eventId: eventIdOf("forged") };
    await refusal(applyDecision(forged, deps()));
    expect((await store.get(allowed))?.action).toBeUndefined();
  });

  it("refuses an auto event for an item the record escalated", async () => {
    const escalated = record("post-4", "human", "remove");
    await store.create(escalated);
    const forged = { ...genuine(escalated), route: "auto" as const };
    const error = await refusal(applyDecision(forged, deps()));
    expect(error.record.route).toBe("human");
    expect((await store.get(escalated))?.status).toBe("pending_review");
  });

  it("refuses an option its policy never automates, even when the record says auto", async () => {
    // A record no decide path writes (remove is automate: false): the policy still decides.
    const impossible = record("post-5", "auto", "remove");
    await store.create(impossible);
    const error = await refusal(applyDecision(genuine(impossible), deps()));
    expect(error.message).toMatch(/never automated/);
    expect((await store.get(impossible))?.status).toBe("auto_approved");
  });

  it("refuses an event for a policy version this function does not know", async () => {
    const unknown = { ...record("post-6", "auto", "allow"), policyVersion: 7 };
    await store.create(unknown);
    await refusal(applyDecision(genuine(unknown), deps()));
  });

  it("leaves a missing record to a retry (a genuine event always follows its record)", async () => {
    const absent = record("post-7", "auto", "allow");
    await expect(applyDecision(genuine(absent), deps())).rejects.toThrow(/no decision record/);
  });

  it("transitions only a record that still holds the choice it was checked with", async () => {
    const allowed = record("post-8", "auto", "allow");
    await store.create(allowed);
    const wrongChoice = { status: "auto_approved" as const, chosen: "remove", route: "auto" as const };
    expect(await store.transition(allowed, wrongChoice, "actioned", {})).toBe(false);
    expect((await store.get(allowed))?.status).toBe("auto_approved");
  });
});

describe("the review intake queues only what the record escalated", () => {
  it("queues the genuine event and refuses a human event for an automated record", async () => {
    const escalated = record("post-9", "human", "remove");
    const automated = record("post-10", "auto", "allow");
    await store.create(escalated);
    await store.create(automated);
    expect(await queueForReview(genuine(escalated), { store })).toBe("queued");
    const forged = { ...genuine(automated), route: "human" as const };
    await refusal(queueForReview(forged, { store }));
    expect((await store.get(automated))?.reviewQueuedBy).toBeUndefined();
  });
});
