/**
 * A cascade tier's answer is bound to its own model: when the endpoint answers the second tier's
 * request with the first model (its answer carries the first model's file hash), that answer is
 * never acted on, whether or not the policy requires a certificate. The item goes to people as
 * the first tier passed it on, and the record keeps only the answers that are their tier's own.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { Item } from "../../shared/domain/item.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { type DecideDependencies, decideMessage } from "../../shared/use-cases/decide-message.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const CASCADE = cascadeTicketsPolicy({
  autoThreshold: 0.8,
  cascade: [{ model: "large", autoThreshold: 0.7, temperature: 2 }],
});
const SMALL_SHA = "5".repeat(64);
const LARGE_SHA = "1".repeat(64);

/** An endpoint whose answers carry the hash `shaOf` gives for the model asked. */
function endpoint(shaOf: (model: string | undefined) => string): DecidesItems & { asked: unknown[] } {
  const asked: unknown[] = [];
  return {
    asked,
    async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
      const { model } = systemOneRequest(item, policy);
      asked.push(model);
      return {
        // The first tier is unsure; the second is sure.
        logits: model === "large" ? [6, 0, 0, 0] : [1, 0.5, 0, 0],
        allowedTokenMass: 0.9,
        modelSha256: shaOf(model),
        promptSha256: "p".repeat(64),
        promptVersion: "test@1",
        latencyMs: 1,
      };
    },
  };
}

let store: InMemoryDecisionStore;
let events: PipelineEvent[];

beforeEach(() => {
  store = new InMemoryDecisionStore();
  events = [];
});

async function decide(policy: Policy, answers: DecidesItems) {
  const deps: DecideDependencies = {
    policies: new PolicyRegistry([policy]),
    store,
    publisher: { publish: async (sent) => void events.push(...sent) },
    endpoint: answers,
    publishLeaseMs: 1000,
    now: () => new Date(Date.UTC(2026, 11, 1)),
  };
  const outcome = await decideMessage(
    JSON.stringify({ id: "T-1", policy: "tickets", state: "charged twice" }),
    deps,
  );
  const record = await store.get({ itemId: "T-1", policyId: "tickets", policyVersion: 1 });
  return { outcome, record: record! };
}

describe("a cascade tier's answer is its own model's", () => {
  for (const requireCertificate of [false, true])
    it(`does not act on a second tier's answer carrying the first model's hash (requireCertificate ${requireCertificate})`, async () => {
      const policy = parsePolicy({ ...CASCADE, requireCertificate });
      const misrouted = endpoint(() => SMALL_SHA);
      const { outcome, record } = await decide(policy, misrouted);
      expect(misrouted.asked).toEqual(["small", "large"]);
      expect(outcome).toEqual({ outcome: "decided", route: "human" });
      expect(record).toMatchObject({ route: "human", status: "pending_review", modelSha256: SMALL_SHA });
      expect(record.tiers?.map((t) => [t.model, t.modelSha256])).toEqual([["small", SMALL_SHA]]);
      const made = events.filter((e) => e.detailType === DetailType.made).map((e) => e.detail);
      expect(made).toEqual([expect.objectContaining({ route: "human", tier: { index: 1, model: "small" } })]);
    });

  it("still acts on a second tier that answers with its own model", async () => {
    const own = endpoint((model) => (model === "large" ? LARGE_SHA : SMALL_SHA));
    const { outcome, record } = await decide(CASCADE, own);
    expect(outcome).toEqual({ outcome: "decided", route: "auto" });
    expect(record.tiers?.map((t) => t.modelSha256)).toEqual([SMALL_SHA, LARGE_SHA]);
  });
});
