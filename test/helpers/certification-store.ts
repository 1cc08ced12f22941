/**
 * A policy version's decisions written to a decision store as the decide path writes them, with
 * the hidden truth of each, and the review dependencies a scripted lead labels them through: what
 * the certificate's flow tests share (a certification sample drawn, labelled or not, proposed).
 */
import type { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { decisionOf, type FlowShape } from "./review-flow.ts";

/** The model file the decisions name. */
export const FLOW_MODEL = "a".repeat(64);

/** Writes `shape.decisions` decisions of `policy` version 1; returns each item's true label. */
export async function decidedStore(
  store: InMemoryDecisionStore,
  policy: Policy,
  shape: FlowShape,
  seed: number,
): Promise<Map<string, string>> {
  const random = new SeededRandom(seed * 65_537);
  const truth = new Map<string, string>();
  for (let i = 0; i < shape.decisions; i++) {
    const d = decisionOf(random, shape);
    const itemId = `S${seed}-${i}`;
    const routing = routeDecision(policy, softmax(d.logits), itemId);
    const wrong = random.nextFloat() < d.wrongChance;
    truth.set(itemId, policy.options[wrong ? (d.chosen + 1) % 4 : d.chosen]!.id);
    const at = new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString();
    const record: DecisionRecord = {
      itemId,
      policyId: policy.id,
      policyVersion: policy.version,
      status: routing.route === "auto" ? "actioned" : "pending_review",
      route: routing.route,
      reason: routing.reason,
      chosen: routing.chosen,
      topProbability: routing.topProbability,
      rawLogits: d.logits,
      modelSha256: FLOW_MODEL,
      promptVersion: "choice-v1@policy-first",
      ...(routing.audit
        ? { auditBand: routing.audit.band, auditInclusionProbability: routing.audit.inclusionProbability }
        : {}),
      createdAt: at,
      updatedAt: at,
      eventPublished: true,
    };
    await store.create(record);
  }
  return truth;
}

/** A clock that moves a minute per call, and the review use case's dependencies on `store`. */
export function reviewOf(store: InMemoryDecisionStore, policy: Policy) {
  let clock = Date.UTC(2026, 11, 1);
  const now = () => {
    clock += 60_000;
    return new Date(clock);
  };
  const policies = new PolicyRegistry([policy]);
  return {
    now,
    policies,
    review: {
      store,
      policies,
      publisher: { publish: async () => undefined },
      timings: { claimMs: 60_000, changeWindowMs: 60_000 },
      now,
    },
    lead: { id: "lead", name: "Lead", groups: ["reviewers"] },
  };
}
