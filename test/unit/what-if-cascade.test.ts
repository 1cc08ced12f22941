/**
 * What-if of one model against two (issue 35, item 4). On stored decisions: a candidate without
 * the live cascade sends to people what the second model acted on; a candidate adding a second
 * model to a one-model policy asks it where its first model passes the item on, which stored
 * logits cannot answer (production never asked it): those items stay with people and are counted,
 * and re-scored the endpoint answers them, its calls counted in the cost. The endpoint is a stand-in
 * answering by model: the first model is sure of half the items, the second of every item.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { Item } from "../../shared/domain/item.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { type WhatIfSource, whatIf } from "../../shared/use-cases/what-if/what-if.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const ITEMS = 40;
const ONE_MODEL = parsePolicy({ ...TEAMS_POLICY, auditSampleRate: 0 });
const TWO_MODELS = parsePolicy({
  ...ONE_MODEL,
  version: 2,
  cascade: [{ model: "large", autoThreshold: 0.8 }],
});

/** Sure of even items at the first model (p ≈ 0.998), unsure of odd ones (p ≈ 0.57); the second model sure of all. */
const endpoint: DecidesItems & { calls: { first: number; second: number } } = {
  calls: { first: 0, second: 0 },
  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const second = policy.model === "large";
    this.calls[second ? "second" : "first"]++;
    const even = Number(item.id.split("-")[1]) % 2 === 0;
    return {
      logits: second || even ? [6, 0] : [0.3, 0],
      allowedTokenMass: 0.9,
      modelSha256: (second ? "b" : "a").repeat(64),
      promptSha256: "c".repeat(64),
      promptVersion: "choice-v1@policy-first",
      latencyMs: second ? 40 : 10,
    };
  },
};

async function decided(live: Policy) {
  const store = new InMemoryDecisionStore();
  const policies = new PolicyRegistry([live]);
  const deps = {
    policies,
    store,
    endpoint,
    publisher: { publish: async () => {} },
    publishLeaseMs: 1000,
    now: () => new Date(),
  };
  for (let i = 0; i < ITEMS; i++)
    await decideMessage(JSON.stringify({ id: `T-${i}`, policy: "tickets", state: "charged twice" }), deps);
  return { store, policies };
}

const since = () => new Date(Date.now() - 3_600_000).toISOString();
const run = (deps: Awaited<ReturnType<typeof decided>>, candidate: Policy, source: WhatIfSource) =>
  whatIf(deps, { candidate, source, since: since(), sample: 100 });

describe("what-if of one model against two", () => {
  it("shows what dropping the second model sends to people, from the stored decisions", async () => {
    const live = await decided(TWO_MODELS);
    const candidate = parsePolicy({ ...ONE_MODEL, version: 3 });
    const result = await run(live, candidate, { kind: "stored-logits" });
    expect(result.summary.coverage.live).toBe(1);
    expect(result.summary.coverage.candidate).toBe(0.5);
    expect(result.summary.toHuman.items).toBe(ITEMS / 2);
    expect(result.laterModels).toEqual({ answered: 0, unanswered: 0 });
  });

  it("asks the second model where the first passes the item on: its stored answer, or none (counted)", async () => {
    const fromTwo = await run(await decided(TWO_MODELS), parsePolicy({ ...TWO_MODELS, version: 3 }), {
      kind: "stored-logits",
    });
    expect(fromTwo.laterModels).toEqual({ answered: ITEMS / 2, unanswered: 0 });
    expect(fromTwo.summary.coverage.candidate).toBe(1);

    const fromOne = await run(await decided(ONE_MODEL), TWO_MODELS, { kind: "stored-logits" });
    expect(fromOne.laterModels).toEqual({ answered: 0, unanswered: ITEMS / 2 });
    expect(fromOne.summary.coverage.candidate).toBe(0.5);
  });

  it("re-scored, the endpoint answers the second model too, and its calls are counted in the cost", async () => {
    const live = await decided(ONE_MODEL);
    endpoint.calls = { first: 0, second: 0 };
    const result = await run(live, TWO_MODELS, { kind: "rescore", endpoint, concurrency: 4 });
    expect(result.laterModels).toEqual({ answered: ITEMS / 2, unanswered: 0 });
    expect(endpoint.calls).toEqual({ first: ITEMS, second: ITEMS / 2 });
    expect(result.cost.calls).toBe(ITEMS + ITEMS / 2);
    expect(result.summary.coverage).toEqual({ live: 0.5, candidate: 1 });
    expect(result.rows.find((r) => r.itemId === "T-1")!.candidate).toMatchObject({ route: "auto" });
  });
});
