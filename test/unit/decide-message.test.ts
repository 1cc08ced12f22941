/**
 * The decide use case and its targets on the in-memory store, without servers: the faults that
 * once routed an item twice, rejected it too late or acted on a broken answer, each as a test.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import { EndpointUnavailableError, EventOwedError, StoreRejectedError } from "../../shared/domain/errors.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { applyDecision } from "../../shared/use-cases/apply-decision.ts";
import { type DecideDependencies, decideMessage } from "../../shared/use-cases/decide-message.ts";
import type { DecisionMadeDetail } from "../../shared/use-cases/event-authority.ts";
import { queueForReview } from "../../shared/use-cases/queue-for-review.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const policyV1 = TEAMS_POLICY;
const policyV2: Policy = { ...policyV1, version: 2, autoThreshold: 0.5 };

/** An endpoint that answers with fixed logits and counts its calls. */
class FixedEndpoint implements DecidesItems {
  calls = 0;
  constructor(
    private readonly logits: number[],
    private readonly optionOrder?: "cyclic",
  ) {}
  async decide(): Promise<EndpointDecision> {
    this.calls++;
    return {
      ...(this.optionOrder ? { optionOrder: this.optionOrder } : {}),
      logits: this.logits,
      allowedTokenMass: 0.9,
      modelSha256: "a".repeat(64),
      promptSha256: "b".repeat(64),
      promptVersion: "test@1",
      latencyMs: 1,
    };
  }
}

/** A publisher that keeps what it was given. */
class RecordingPublisher implements PublishesEvents {
  readonly events: PipelineEvent[] = [];
  async publish(events: readonly PipelineEvent[]): Promise<void> {
    this.events.push(...events);
  }
  made(): PipelineEvent[] {
    return this.events.filter((e) => e.detailType === DetailType.made);
  }
}

let store: InMemoryDecisionStore;
let publisher: RecordingPublisher;
let endpoint: FixedEndpoint;
let clock: number;

function deps(overrides: Partial<DecideDependencies> = {}): DecideDependencies {
  return {
    policies: new PolicyRegistry([policyV1]),
    store,
    publisher,
    endpoint,
    publishLeaseMs: 1000,
    now: () => new Date(clock),
    ...overrides,
  };
}

const item = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: "T-1", policy: "tickets", state: "charged twice", ...extra });

beforeEach(() => {
  store = new InMemoryDecisionStore();
  publisher = new RecordingPublisher();
  endpoint = new FixedEndpoint([3, 0]);
  clock = Date.UTC(2026, 10, 30);
});

describe("decideMessage", () => {
  it("sends a decision whose letters held less than the policy's floor to people as off_options", async () => {
    const guarded = { ...policyV1, minAllowedTokenMass: 0.95 };
    expect(await decideMessage(item(), deps({ policies: new PolicyRegistry([guarded]) }))).toEqual({
      outcome: "decided",
      route: "human",
    });
    expect(await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 })).toMatchObject({
      reason: "off_options",
      allowedTokenMass: 0.9,
    });
    expect(publisher.made()[0]!.detail).toMatchObject({ route: "human", reason: "off_options" });
  });

  it("divides a policy's prior out of the logits before routing, keeping the raw logits", async () => {
    const corrected = { ...policyV1, prior: [0.99, 0.01] };
    await decideMessage(item(), deps({ policies: new PolicyRegistry([corrected]) }));
    const record = await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 });
    // [3, 0] minus log [0.99, 0.01] is [3.01, 4.61]: the second option.
    expect(record?.chosen).toBe(policyV1.options[1]!.id);
    expect(record?.rawLogits).toEqual([3, 0]);
  });

  it("applies a policy's per-option offsets after the temperature (vector scaling)", async () => {
    const shifted = { ...policyV1, optionBias: [-5, 5] };
    await decideMessage(item(), deps({ policies: new PolicyRegistry([shifted]) }));
    const record = await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 });
    // Logits [3, 0] favour the first option; offsets [-5, 5] turn it to the second.
    expect(record?.chosen).toBe(policyV1.options[1]!.id);
  });

  it("asks for the cyclic order on the state-first layout when the policy does, and records it", async () => {
    const debiased: Policy = { ...policyV1, optionOrder: "cyclic" };
    const request = systemOneRequest({ id: "T-1", policy: "tickets", state: "x" }, debiased);
    expect(request.layout).toBe("state-first");
    expect(request.questions.decision).toMatchObject({ option_order: "cyclic" });
    expect(
      systemOneRequest({ id: "T-1", policy: "tickets", state: "x" }, policyV1).questions.decision,
    ).not.toHaveProperty("option_order");
    const cyclicEndpoint = new FixedEndpoint([3, 0], "cyclic");
    await decideMessage(item(), deps({ policies: new PolicyRegistry([debiased]), endpoint: cyclicEndpoint }));
    const record = await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 });
    expect(record?.optionOrder).toBe("cyclic");
  });

  it("decides, stores and publishes one Decision Made with a stable event id", async () => {
    expect(await decideMessage(item(), deps())).toEqual({ outcome: "decided", route: "auto" });
    const [made] = publisher.made();
    expect(made?.detail).toMatchObject({ itemId: "T-1", route: "auto", chosen: "billing" });
    expect(made?.detail.eventId).toMatch(/^[0-9a-f]{32}$/);
    expect((await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 }))?.eventPublished).toBe(
      true,
    );
  });

  it("keeps the message while its event is owed: a write whose answer was lost, found by the SDK's retry", async () => {
    // The first put stored the record under this delivery's lease, its answer was lost, and the
    // retried put found the record: created false. Before, the lease (its own) could not be
    // claimed, decideMessage answered "decided", the message was deleted and no event ever left.
    const lostAnswer: DecisionStore = Object.assign(Object.create(store) as DecisionStore, {
      create: async (record: Parameters<DecisionStore["create"]>[0], leaseUntil?: number) => {
        await store.create(record, leaseUntil);
        return { created: false, record: (await store.get(record))! };
      },
    });
    await expect(decideMessage(item(), deps({ store: lostAnswer }))).rejects.toBeInstanceOf(EventOwedError);
    expect(publisher.made()).toHaveLength(0);
    // Redelivered before the lease ends: still owed, still kept.
    await expect(decideMessage(item(), deps())).rejects.toBeInstanceOf(EventOwedError);
    clock += 2000; // past the lease, as the visibility timeout always is
    expect(await decideMessage(item(), deps())).toEqual({ outcome: "already_decided" });
    expect(publisher.made()).toHaveLength(1);
  });

  it("re-sends the same event (same id) when marking it published failed, and the targets apply it once", async () => {
    // PutEvents succeeds, then the write that marks the record published fails.
    const failingMark: DecisionStore = Object.assign(Object.create(store) as DecisionStore, {
      markPublished: async () => {
        throw new Error("injected: mark published failed");
      },
    });
    await expect(decideMessage(item(), deps({ store: failingMark }))).rejects.toThrow(/mark published/);
    clock += 2000; // past the lease: the redelivery repairs the outbox
    await decideMessage(item(), deps());
    const made = publisher.made();
    expect(made).toHaveLength(2);
    expect(made[0]!.detail.eventId).toBe(made[1]!.detail.eventId);
    const outcomes = [];
    for (const event of made)
      outcomes.push(
        await applyDecision(event.detail as unknown as DecisionMadeDetail, {
          store,
          publisher,
          policies: new PolicyRegistry([policyV1]),
          now: () => new Date(clock),
        }),
      );
    expect(outcomes).toEqual(["actioned", "already_actioned"]);
  });

  it("queues an escalated item for review once, however often its event arrives", async () => {
    endpoint = new FixedEndpoint([0.2, 0]);
    await decideMessage(item(), deps());
    const [made] = publisher.made();
    const detail = made!.detail as unknown as DecisionMadeDetail;
    expect(detail.route).toBe("human");
    const outcomes = await Promise.all([
      queueForReview(detail, { store }),
      queueForReview(detail, { store }),
    ]);
    expect(outcomes.sort()).toEqual(["already_queued", "queued"]);
    expect(await queueForReview(detail, { store })).toBe("already_queued");
  });

  it("rejects on first delivery, with the reason, an item the store refuses", async () => {
    const refusing: DecisionStore = Object.assign(Object.create(store) as DecisionStore, {
      create: async (record: { status: string }) => {
        if (record.status !== "rejected") throw new StoreRejectedError("ValidationException: item too large");
        return store.create(record as never);
      },
    });
    expect(await decideMessage(item(), deps({ store: refusing }))).toEqual({ outcome: "rejected" });
    expect(endpoint.calls).toBe(1);
    const rejected = publisher.events.filter((e) => e.detailType === DetailType.rejected);
    expect(rejected).toHaveLength(1);
    expect(JSON.stringify(rejected[0]!.detail.problems)).toMatch(/cannot be stored/);
  });

  it.each([
    [
      "an integer beyond 2^53",
      '{"id":"T-1","policy":"tickets","state":{"amount":12345678901234567890}}',
      "state.amount",
    ],
    [
      "a state nested 40 levels deep",
      `{"id":"T-1","policy":"tickets","state":${'{"a":'.repeat(40)}1${"}".repeat(40)}}`,
      "state.a",
    ],
    ["a duplicate key", '{"id":"T-1","policy":"tickets","state":"x","state":"y"}', "state"],
    ["a duplicate id", '{"id":"T-1","policy":"tickets","state":"x","id":"T-2"}', "id"],
  ])("rejects %s before calling the endpoint, naming the field", async (_what, body, field) => {
    expect(await decideMessage(body, deps())).toEqual({ outcome: "rejected" });
    expect(endpoint.calls).toBe(0);
    const [event] = publisher.events;
    expect(event?.detailType).toBe(DetailType.rejected);
    const problems = event!.detail.problems as { field: string; message: string }[];
    expect(problems.some((p) => p.field.startsWith(field))).toBe(true);
  });

  it("records a duplicate-id item under its hash, not under either id", async () => {
    await decideMessage('{"id":"T-1","policy":"tickets","state":"x","id":"T-2"}', deps());
    expect(publisher.events[0]!.detail.itemId).toMatch(/^invalid-/);
  });

  it("does not decide a duplicate again after a new policy version was added", async () => {
    await decideMessage(item(), deps());
    const v2 = deps({ policies: new PolicyRegistry([policyV1, policyV2]) });
    expect(await decideMessage(item(), v2)).toEqual({ outcome: "already_decided" });
    expect(endpoint.calls).toBe(1);
    expect(publisher.made()).toHaveLength(1);
  });

  it("re-decides under the new version only when the item asks, naming what it supersedes", async () => {
    await decideMessage(item(), deps());
    const v2 = deps({ policies: new PolicyRegistry([policyV1, policyV2]) });
    expect(await decideMessage(item({ redecide: true }), v2)).toMatchObject({ outcome: "decided" });
    expect(await decideMessage(item({ redecide: true }), v2)).toEqual({ outcome: "already_decided" });
    const made = publisher.made();
    expect(made.map((e) => e.detail.policyVersion)).toEqual([1, 2]);
    expect(made[1]!.detail.supersedes).toEqual({ policyVersion: 1, route: "auto", chosen: "billing" });
    expect(made[0]!.detail.eventId).not.toBe(made[1]!.detail.eventId);
  });

  it("lets endpoint failures through for a retry, leaving no record", async () => {
    const failing: DecidesItems = {
      decide: async () => {
        throw new EndpointUnavailableError(
          "malformed answer: answers.decision.x_detail.logits.billing: expected number",
        );
      },
    };
    await expect(decideMessage(item(), deps({ endpoint: failing }))).rejects.toThrow(/malformed answer/);
    expect(await store.latest("T-1", "tickets")).toBeUndefined();
    expect(publisher.events).toHaveLength(0);
  });
});
