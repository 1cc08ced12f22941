/**
 * An item submitted in two batches has one decision, and its review counts in both: the second
 * batch's decide finds the decision, notes the batch on the record, and the label (and a later
 * change) reaches each batch. Before, only the first batch counted the review, so the second never
 * announced "Batch Reviewed" and its results never got the label.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { InMemoryBatchStore } from "../../shared/adapters/in-memory/in-memory-batch-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { NO_COUNTS } from "../../shared/domain/batch.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { Reviewer } from "../../shared/domain/review/review.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

/** Unsure logits: every item is escalated to a person. */
const endpoint: DecidesItems = {
  decide: async (): Promise<EndpointDecision> => ({
    logits: [0.1, 0],
    allowedTokenMass: 0.9,
    modelSha256: "a".repeat(64),
    promptSha256: "b".repeat(64),
    promptVersion: "test@1",
    latencyMs: 1,
  }),
};

const ana: Reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
let store: InMemoryDecisionStore;
let batches: InMemoryBatchStore;
const events: PipelineEvent[] = [];

const deps = () => {
  const batchDeps = {
    batches,
    files: { request: async () => undefined },
    now: () => new Date("2032-01-01T00:00:00Z"),
  };
  return {
    policies: new PolicyRegistry([TEAMS_POLICY]),
    store,
    publisher: { publish: async (sent: readonly PipelineEvent[]) => void events.push(...sent) },
    endpoint,
    publishLeaseMs: 1000,
    now: () => new Date("2032-01-01T00:00:00Z"),
    batches: batchDeps,
    timings: { claimMs: 300_000, changeWindowMs: 600_000 },
  };
};

async function submitted(batchId: string): Promise<void> {
  await batches.createBatch({
    batchId,
    policyId: TEAMS_POLICY.id,
    source: `incoming/${TEAMS_POLICY.id}/${batchId}/items.jsonl`,
    status: "submitting",
    counts: NO_COUNTS,
    createdAt: "2032-01-01T00:00:00.000Z",
  });
  await batches.finishIntake(
    batchId,
    { lines: 1, accepted: 1, rejected: 0 },
    new Date("2032-01-01T00:00:00Z"),
  );
  const body = JSON.stringify({ id: "SAME-1", policy: TEAMS_POLICY.id, state: "charged twice", batchId });
  await decideMessage(body, deps());
}

beforeEach(() => {
  store = new InMemoryDecisionStore();
  batches = new InMemoryBatchStore();
  events.length = 0;
});

describe("an item in two batches", () => {
  it("is decided once and its review counts in both batches", async () => {
    await submitted("b-first-000001");
    await submitted("b-second-000001");
    const key = { itemId: "SAME-1", policyId: TEAMS_POLICY.id, policyVersion: TEAMS_POLICY.version };
    const record = (await store.get(key))!;
    expect(record).toMatchObject({ batchId: "b-first-000001", otherBatchIds: ["b-second-000001"] });
    expect(events.filter((e) => e.detailType === "Decision Made")).toHaveLength(1);
    for (const batchId of ["b-first-000001", "b-second-000001"])
      expect((await batches.getBatch(batchId))!.counts).toMatchObject({ decided: 1, human: 1, reviewed: 0 });

    expect((await labelItem({ ...key, label: "billing" }, ana, deps())).stored).toBe(true);
    for (const batchId of ["b-first-000001", "b-second-000001"])
      expect((await batches.getBatch(batchId))!.counts, batchId).toMatchObject({ reviewed: 1 });
  });

  it("notes each other batch once on the record", async () => {
    const record = {
      itemId: "SAME-2",
      policyId: TEAMS_POLICY.id,
      policyVersion: 1,
      status: "pending_review" as const,
      route: "human" as const,
      reason: "below_threshold" as const,
      chosen: "billing",
      distribution: { billing: 0.6, technical: 0.4 },
      batchId: "b-first-000002",
      createdAt: "2032-01-01T00:00:00.000Z",
      updatedAt: "2032-01-01T00:00:00.000Z",
      eventPublished: true,
    };
    await store.create(record);
    expect(await store.addToBatch(record, "b-first-000002")).toBe(false);
    expect(await store.addToBatch(record, "b-other-000002")).toBe(true);
    expect(await store.addToBatch(record, "b-other-000002")).toBe(false);
    expect((await store.get(record))!.otherBatchIds).toEqual(["b-other-000002"]);
  });
});
