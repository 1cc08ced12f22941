/**
 * Re-scoring stored items with a cascade's second model (issue 40, "the plan knows the policy as
 * it runs"): decisions of the shipped `content-moderation` cascade stored with the first model's
 * answer only (as the batch lane stored them before it asked later models, and as every decision
 * the first model acted on is stored), escalations and audit samples labelled. Their cascade
 * certificate cannot judge any pair that passes those items on, and says which items lack the
 * answer and the command that gets it; `rescoreLaterTiers` (the use case `decide calibrate
 * --rescore` runs) asks the real `demo-large` model in process, records each answer as a re-score
 * (its model and when), and the certificate then judges every pair.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { InProcessDecisionEndpoint } from "../../endpoint/server/in-process-endpoint.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import { calibratedProbabilities } from "../../shared/domain/calibration/map.ts";
import { tierPolicy } from "../../shared/domain/cascade.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { rescoreLaterTiers } from "../../shared/use-cases/calibration/rescore-later-tiers.ts";
import { tierAnswer } from "../../shared/use-cases/cascade-scoring.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";
import { readSampleItems } from "../helpers/lead-flow.ts";
import { demoLargeModelPath, demoModelPath, REPO_ROOT } from "../helpers/models.ts";

const GOAL = { kind: "max-auto-error", maxError: 0.05, confidence: 0.95 } as const;

interface Loaded {
  readonly endpoint: InProcessDecisionEndpoint;
  close(): Promise<void>;
}

async function load(path: string): Promise<Loaded> {
  const model = await DecisionModel.load({ modelPath: path });
  const scorer = await DecisionScorer.create(model);
  return {
    endpoint: new InProcessDecisionEndpoint(scorer, path),
    close: async () => {
      await scorer.dispose();
      await model.dispose();
    },
  };
}

let first: Loaded;
let second: Loaded;
let policy: Policy;

beforeAll(async () => {
  first = await load(await demoModelPath());
  second = await load(await demoLargeModelPath());
  policy = (await PolicyRegistry.fromFolder(join(REPO_ROOT, "events/policies"))).current(
    "content-moderation",
  )!;
}, 180_000);

afterAll(async () => {
  await first?.close();
  await second?.close();
});

/** Decides `item` with the first model only and stores it, labelled (by the first model's own choice) when it went to people. */
async function storeFirstOnly(store: InMemoryDecisionStore, item: Item, at: string): Promise<void> {
  let decision: Awaited<ReturnType<InProcessDecisionEndpoint["decide"]>>;
  try {
    decision = await first.endpoint.decide(item, policy);
  } catch (error) {
    // The batch's malformed items (an empty state) are rejected, as the decide path rejects them.
    if (error instanceof EndpointRejectedError) return;
    throw error;
  }
  const probabilities = calibratedProbabilities(decision.logits, policy);
  const routing = routeDecision(policy, probabilities, item.id, decision.allowedTokenMass);
  const answer = tierAnswer({ policy, decision, probabilities, routing });
  const labelled = routing.route === "human";
  const record: DecisionRecord = {
    itemId: item.id,
    policyId: policy.id,
    policyVersion: policy.version,
    status: labelled ? "reviewed" : "actioned",
    route: routing.route,
    reason: routing.reason,
    chosen: routing.chosen,
    topProbability: routing.topProbability,
    rawLogits: decision.logits,
    modelSha256: decision.modelSha256,
    promptVersion: decision.promptVersion,
    tiers: [answer],
    state: item.state,
    ...(routing.audit
      ? { auditBand: routing.audit.band, auditInclusionProbability: routing.audit.inclusionProbability }
      : {}),
    ...(labelled ? { label: routing.chosen, reviewedAt: at } : {}),
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
  await store.create(record);
}

/** Gives the first `count` labelled records demo-large's answer as the live lane records it (a second tier); their ids. */
async function rescoreOnly(store: InMemoryDecisionStore, count: number): Promise<string[]> {
  const records = [];
  for await (const r of store.reviewedSince(policy.id, "0")) records.push(r);
  const ids: string[] = [];
  for (const r of records.slice(0, count)) {
    const view = tierPolicy(policy, 1);
    const decision = await second.endpoint.decide({ id: r.itemId, state: r.state } as Item, view);
    const probabilities = calibratedProbabilities(decision.logits, view);
    const routing = routeDecision(view, probabilities, r.itemId, decision.allowedTokenMass);
    const tiers = [...r.tiers!, tierAnswer({ policy: view, decision, probabilities, routing })];
    expect(await store.transition(r, r.status, r.status, { tiers })).toBe(true);
    ids.push(r.itemId);
  }
  return ids;
}

describe("re-scoring stored items with the cascade's second model", () => {
  it("turns an unjudgeable cascade certificate into a judged one, each answer recorded as a re-score", async () => {
    const store = new InMemoryDecisionStore();
    const items = await readSampleItems(60);
    for (const [i, item] of items.entries())
      await storeFirstOnly(store, item, new Date(Date.UTC(2026, 11, 1) + i * 1000).toISOString());
    const now = new Date(Date.UTC(2026, 11, 2));
    const certify = async () => {
      const labelled = await reviewedLabels(store, policy, undefined, now.toISOString());
      return calibratePolicy(policy, labelled.rows, {
        goal: GOAL,
        now,
        thresholdFloor: labelled.floor,
        unlabelled: labelled.missing,
      });
    };
    const before = await certify();
    // No labelled item carries demo-large's answer: the certificate speaks for the first model alone.
    expect(before.cascade).toBeUndefined();
    const line = before.threshold.notes.find((n) => n.includes("--rescore"));
    expect(line).toMatch(
      /^no labelled item carries the answer of demo-large .*: the certificate speaks for the first model alone/,
    );
    expect(line).toContain("npx decide calibrate --rescore --policy content-moderation");
    // One stored escalation answered by demo-large when decided (the live lane), the rest not: unjudgeable pairs.
    const [one] = await rescoreOnly(store, 1);
    const partial = await certify();
    expect(
      partial.cascade!.result.unjudgeable,
      "stored escalations lack demo-large's answer",
    ).toBeGreaterThan(0);
    const missing = partial.threshold.notes.find((n) => n.includes("--rescore"));
    expect(missing).toMatch(
      /^\d+ labelled or drawn items lack demo-large's answer \(.+\), so \d+ threshold pairs cannot be judged/,
    );
    expect(missing).toContain("npx decide calibrate --rescore --policy content-moderation");
    expect(missing).not.toContain(one!);

    const at = new Date(Date.UTC(2026, 11, 1, 12));
    const rescored = await rescoreLaterTiers({ store, endpoint: second.endpoint, now: () => at }, policy);
    expect(rescored.failed).toEqual([]);
    expect(rescored.rescored).toBe(rescored.considered - 1);
    expect(rescored.considered).toBe(before.labels);
    const after = await certify();
    expect(after.cascade!.result.unjudgeable).toBe(0);
    expect(after.threshold.notes.some((n) => n.includes("--rescore"))).toBe(false);
    // Each re-scored answer is demo-large's, marked as a re-score with its time; the decision is unchanged.
    const reviewed = [];
    for await (const r of store.reviewedSince(policy.id, "0")) reviewed.push(r);
    for (const r of reviewed.filter((x) => x.itemId !== one)) {
      expect(r.tiers, r.itemId).toHaveLength(1);
      const [re] = r.rescores!;
      expect(re).toMatchObject({ rescore: true, tier: 1, model: "demo-large", rescoredAt: at.toISOString() });
      expect(re!.modelSha256).not.toBe(r.modelSha256);
    }
    // A second run finds every answer and asks nothing.
    const again = await rescoreLaterTiers({ store, endpoint: second.endpoint, now: () => at }, policy);
    expect(again).toMatchObject({ rescored: 0, answered: again.considered });
    // A certificate read back as of before the re-score sees the labels as they were then.
    const asBefore = await reviewedLabels(
      store,
      policy,
      undefined,
      new Date(Date.UTC(2026, 11, 1, 11)).toISOString(),
    );
    expect(asBefore.rows.filter((r) => r.secondLogits).map((r) => r.key)).toEqual([one]);
  }, 300_000);

  it("does not keep an answer that carries the first model's file hash", async () => {
    const store = new InMemoryDecisionStore();
    for (const item of await readSampleItems(20))
      await storeFirstOnly(store, item, "2026-12-01T00:00:00.000Z");
    const records = [];
    for await (const r of store.reviewedSince(policy.id, "0")) records.push(r);
    expect(records.length).toBeGreaterThan(0);
    const wrong = await rescoreLaterTiers({ store, endpoint: first.endpoint, now: () => new Date() }, policy);
    expect(wrong.rescored).toBe(0);
    expect(wrong.failed.length).toBe(records.length);
    expect(wrong.failed[0]!.reason).toContain("first model's file hash");
    for (const r of records) expect((await store.get(r))!.rescores).toBeUndefined();
  }, 120_000);
});
