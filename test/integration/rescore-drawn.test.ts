/**
 * `decide calibrate --plan --request N` on a cascade gets the later model's answers (issue 40,
 * "the plan knows the policy as it runs"): the items a certification sample draws that the first
 * model decided hold no answer of `demo-large`, which the cascade's certificate needs. With a
 * source (`--model FILE` here, the real `demo-large` in process; `--url` and `--endpoint-name` open
 * the same way) the drawn items are re-scored straight after the draw, and only they; without one,
 * the plan prints one line saying how many lack the answer and the command that gets it. Small:
 * 40 sample items decided by the real first model, a sample of 4.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { drawnRescoreLines, openDrawnRescore, rescoreDrawn } from "../../cli/calibrate/calibrate-rescore.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { InProcessDecisionEndpoint } from "../../endpoint/server/in-process-endpoint.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibratedProbabilities } from "../../shared/domain/calibration/map.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { tierAnswer } from "../../shared/use-cases/cascade-scoring.ts";
import { readSampleItems } from "../helpers/lead-flow.ts";
import { demoLargeModelPath, demoModelPath, REPO_ROOT } from "../helpers/models.ts";

let first: { endpoint: InProcessDecisionEndpoint; close(): Promise<void> };
let policy: Policy;

beforeAll(async () => {
  const path = await demoModelPath();
  const model = await DecisionModel.load({ modelPath: path });
  const scorer = await DecisionScorer.create(model);
  first = {
    endpoint: new InProcessDecisionEndpoint(scorer, path),
    close: async () => {
      await scorer.dispose();
      await model.dispose();
    },
  };
  policy = (await PolicyRegistry.fromFolder(join(REPO_ROOT, "events/policies"))).current(
    "content-moderation",
  )!;
}, 180_000);

afterAll(async () => {
  await first?.close();
});

/** Decides `items` with the first model only (as every item it acts on is stored) and stores them. */
async function storeFirstOnly(store: InMemoryDecisionStore, items: readonly Item[]): Promise<number> {
  let automated = 0;
  for (const [i, item] of items.entries()) {
    const at = new Date(Date.UTC(2026, 11, 1) + i * 1000).toISOString();
    let decision: Awaited<ReturnType<InProcessDecisionEndpoint["decide"]>>;
    try {
      decision = await first.endpoint.decide(item, policy);
    } catch (error) {
      if (error instanceof EndpointRejectedError) continue;
      throw error;
    }
    const probabilities = calibratedProbabilities(decision.logits, policy);
    const routing = routeDecision(policy, probabilities, item.id, decision.allowedTokenMass);
    const auto = routing.route === "auto";
    if (auto) automated++;
    const record: DecisionRecord = {
      itemId: item.id,
      policyId: policy.id,
      policyVersion: policy.version,
      status: auto ? "actioned" : "pending_review",
      route: routing.route,
      reason: routing.reason,
      chosen: routing.chosen,
      topProbability: routing.topProbability,
      rawLogits: decision.logits,
      modelSha256: decision.modelSha256,
      promptVersion: decision.promptVersion,
      tiers: [tierAnswer({ policy, decision, probabilities, routing })],
      state: item.state,
      createdAt: at,
      updatedAt: at,
      eventPublished: true,
    };
    await store.create(record);
  }
  return automated;
}

async function drawnAndOthers(store: InMemoryDecisionStore, sample: string) {
  const all: DecisionRecord[] = [];
  for await (const r of store.pendingSince(policy.id, "0")) all.push(r);
  return {
    drawn: all.filter((r) => r.certification?.sample === sample),
    others: all.filter((r) => r.certification?.sample !== sample),
  };
}

describe("--plan --request N on a cascade", () => {
  it("re-scores the drawn items with the later model straight after the draw, and says how without a source", async () => {
    const store = new InMemoryDecisionStore();
    const automated = await storeFirstOnly(store, await readSampleItems(40));
    expect(automated, "the first model acts on some sample items").toBeGreaterThanOrEqual(4);
    // Each sample on its own day (a sample is named by its policy and the time it was drawn).
    const draw = (day: number) =>
      requestCertification(
        { store, now: () => new Date(Date.UTC(2026, 11, day)) },
        { policy, size: 2, minProbability: policy.autoThreshold, order: "by-time" },
      );
    const target = { policy, table: "decisions-local", policiesDir: "events/policies" };

    // Without a source: exactly one line, how many lack demo-large's answer and the command.
    const one = await draw(2);
    expect(one.queued).toBe(2);
    const without = await rescoreDrawn(store, { ...target, sample: one.frame.sample }, undefined, () => {
      throw new Error("no progress without a source");
    });
    expect(without).toMatchObject({ model: "demo-large", lacking: one.queued });
    const printed = drawnRescoreLines(without!);
    expect(printed.lines).toHaveLength(1);
    expect(printed.lines[0]).toBe(
      `  ${one.queued} drawn items lack demo-large's answer (the first model decided them; the registered plan does not need it, as it judges each drawn item by the model that acted; it serves a learn-then-test certificate on the labels held and the plan's reading of later labels): get it with  npx decide calibrate --rescore --policy content-moderation --from-table decisions-local --url http://localhost:8080 (the local endpoint; deployed: --endpoint-name NAME instead of --url)`,
    );

    // With `--model FILE` (demo-large's file): the second sample's items, and only they, re-scored.
    const source = await openDrawnRescore(policy, { model: await demoLargeModelPath() });
    expect(source).toBeDefined();
    try {
      const two = await draw(3);
      expect(two.queued).toBe(2);
      const notes: string[] = [];
      const done = await rescoreDrawn(store, { ...target, sample: two.frame.sample }, source, (l) =>
        notes.push(l),
      );
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatch(
        new RegExp(
          `^re-scoring ${two.queued} drawn items of ${two.frame.sample} with demo-large on .+demo-large.+\\.gguf \\.\\.\\.$`,
        ),
      );
      expect(done!.run!.rescored).toMatchObject({ rescored: two.queued, considered: two.queued, failed: [] });
      expect(drawnRescoreLines(done!)).toEqual({
        lines: [
          `  re-scored ${two.queued} drawn items with demo-large on ${source!.name} (${two.queued} drawn, 0 had its answer already); each kept on its decision as a re-score, never acted on`,
        ],
        exitCode: 0,
      });
      const { drawn, others } = await drawnAndOthers(store, two.frame.sample);
      expect(drawn).toHaveLength(two.queued);
      for (const r of drawn)
        expect(r.rescores, r.itemId).toEqual([
          expect.objectContaining({ rescore: true, tier: 1, model: "demo-large" }),
        ]);
      // The first sample's items and the escalations were not asked.
      expect(others.length).toBeGreaterThan(0);
      for (const r of others) expect(r.rescores, r.itemId).toBeUndefined();
      // Asked again: every drawn item holds the answer, nothing lacks it, nothing is printed.
      const again = await rescoreDrawn(store, { ...target, sample: two.frame.sample }, source, () => {
        throw new Error("nothing to re-score");
      });
      expect(again).toMatchObject({ lacking: 0 });
      expect(drawnRescoreLines(again!).lines).toEqual([]);
    } finally {
      await source?.close();
    }
  }, 240_000);

  it("refuses a source for a policy without a cascade", async () => {
    const alone = { ...policy, cascade: undefined };
    await expect(openDrawnRescore(alone, { url: "http://localhost:8080" })).rejects.toThrow(
      /has no cascade, so no later model to ask/,
    );
    expect(await openDrawnRescore(alone, {})).toBeUndefined();
  });
});
