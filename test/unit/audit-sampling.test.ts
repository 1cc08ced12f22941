/**
 * Audit sampling by confidence band, from the policy file to the estimate: the policy's bands
 * are validated field by field, the real decide path stores each automatable decision's band and
 * inclusion probability, audit samples still go to a person, and the estimate reads audit labels
 * only (a label on an item escalated for another reason stays out).
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { auditInclusion, bandStart } from "../../shared/domain/audit/bands.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { Reviewer } from "../../shared/domain/review/review.ts";
import { auditLines } from "../../shared/reports/audit-text.ts";
import { estimateAutoErrors } from "../../shared/use-cases/audit-estimate.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

/** Two automatable options (billing first), a threshold of 0.6. */
const base = { ...TEAMS_POLICY, id: "posts", autoThreshold: 0.6 };

describe("audit bands in a policy", () => {
  it("names each band by its edges and gives it its own rate", () => {
    const policy = parsePolicy({ ...base, auditBands: { edges: [0.9, 0.99], rates: [0.5, 0.1, 0.01] } });
    expect(auditInclusion(policy, 0.7)).toEqual({ band: "<0.9", inclusionProbability: 0.5 });
    expect(auditInclusion(policy, 0.9)).toEqual({ band: "0.9-0.99", inclusionProbability: 0.1 });
    expect(auditInclusion(policy, 0.995)).toEqual({ band: ">=0.99", inclusionProbability: 0.01 });
    expect(["<0.9", ">=0.99", "0.9-0.99"].sort((a, b) => bandStart(a) - bandStart(b))).toEqual([
      "<0.9",
      "0.9-0.99",
      ">=0.99",
    ]);
    // Without bands, one band at the flat rate.
    expect(auditInclusion(parsePolicy({ ...base, auditSampleRate: 0.05 }), 0.7)).toEqual({
      band: "all",
      inclusionProbability: 0.05,
    });
  });

  it.each([
    [
      { edges: [0.9], rates: [0.5, 0.1, 0.01] },
      0,
      /auditBands\.rates: needs one rate per band: 2 for 1 edges, got 3/,
    ],
    [{ edges: [0.99, 0.9], rates: [0.5, 0.1, 0.01] }, 0, /auditBands\.edges: must be strictly increasing/],
    [{ edges: [0.9], rates: [0.5, 0] }, 0, /auditBands\.rates\.1: Too small/],
    [
      { edges: [0.9], rates: [0.5, 0.1] },
      0.1,
      /auditBands: replaces auditSampleRate: give one of them, not both/,
    ],
  ])("refuses bands %j with auditSampleRate %d, naming the field", (auditBands, auditSampleRate, message) => {
    expect(() => parsePolicy({ ...base, auditBands, auditSampleRate })).toThrow(message);
  });
});

/** An endpoint whose answer's confidence is written in the item's state ("p=0.95"). */
const endpoint: DecidesItems = {
  async decide(item) {
    const p = Number(/p=([\d.]+)/.exec(String(item.state))![1]);
    return {
      logits: [Math.log(p), Math.log(1 - p)],
      allowedTokenMass: 0.9,
      modelSha256: "a".repeat(64),
      promptSha256: "b".repeat(64),
      promptVersion: "test@1",
      latencyMs: 1,
    };
  },
};

const reviewer: Reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };

async function decideAll(policy: Policy, items: { id: string; p: number }[]) {
  const store = new InMemoryDecisionStore();
  const policies = new PolicyRegistry([policy]);
  const deps = {
    policies,
    store,
    endpoint,
    publisher: { publish: async () => undefined },
    publishLeaseMs: 1000,
    now: () => new Date("2026-11-30T10:00:00.000Z"),
  };
  for (const item of items)
    await decideMessage(JSON.stringify({ id: item.id, policy: policy.id, state: `p=${item.p}` }), deps);
  const review = { ...deps, timings: { claimMs: 60_000, changeWindowMs: 60_000 } };
  return { store, policies, review };
}

/** Every record of the "posts" policy the store holds, through the decisions view's reads. */
async function everyOf(store: DecisionStore): Promise<DecisionRecord[]> {
  const records: DecisionRecord[] = [];
  for await (const r of everyDecision(store, { ...allTime(new Date("2030-01-01")), policyIds: ["posts"] }))
    records.push(r);
  return records;
}

describe("audit samples on the decide path", () => {
  const policy = parsePolicy({ ...base, auditBands: { edges: [0.9], rates: [0.5, 0.2] } });
  const items = Array.from({ length: 200 }, (_, i) => ({ id: `P-${i}`, p: i % 2 ? 0.95 : 0.7 }));

  it("stores the band and inclusion probability of every automatable decision, and sends audit samples to people", async () => {
    const { store } = await decideAll(policy, [...items, { id: "LOW", p: 0.55 }]);
    const decided = await everyOf(store);
    const auto = decided.filter((r) => r.status === "auto_approved");
    const audited = decided.filter((r) => r.status === "pending_review");
    for (const r of [...auto, ...audited].filter((r) => r.itemId !== "LOW"))
      expect(r.auditInclusionProbability).toBe(r.auditBand === "<0.9" ? 0.5 : 0.2);
    const samples = audited.filter((r) => r.reason === "audit_sample");
    expect(samples.every((r) => r.route === "human")).toBe(true);
    // The draw follows each band's rate (100 items per band).
    const inBand = (band: string) => samples.filter((r) => r.auditBand === band).length;
    expect(inBand("<0.9")).toBeGreaterThan(30);
    expect(inBand("<0.9")).toBeLessThan(70);
    expect(inBand(">=0.9")).toBeGreaterThan(8);
    expect(inBand(">=0.9")).toBeLessThan(35);
    // Below the threshold: escalated for that reason, with no audit band (not a sample).
    const low = audited.find((r) => r.itemId === "LOW")!;
    expect(low.reason).toBe("below_threshold");
    expect(low.auditBand).toBeUndefined();
  });

  it("estimates from audit labels only: a label on an escalated item stays out", async () => {
    const { store, policies, review } = await decideAll(policy, [...items, { id: "LOW", p: 0.55 }]);
    const pending = (await everyOf(store)).filter((r) => r.status === "pending_review");
    const samples = pending.filter((r) => r.reason === "audit_sample");
    // Reviewers find every third audit sample wrong, and the escalated item wrong too.
    for (const [i, r] of samples.entries())
      await labelItem({ ...r, label: i % 3 === 0 ? "technical" : "billing" }, reviewer, review);
    await labelItem(
      { itemId: "LOW", policyId: "posts", policyVersion: 1, label: "technical" },
      reviewer,
      review,
    );
    const [audit] = await estimateAutoErrors(
      { store, policies },
      { since: "2026-11-01T00:00:00.000Z", now: new Date("2026-12-01T00:00:00.000Z"), policyId: "posts" },
    );
    expect(audit!.overall.samples).toBe(samples.length);
    expect(audit!.overall.labelled).toBe(samples.length);
    expect(audit!.overall.wrong).toBe(Math.ceil(samples.length / 3));
    expect(audit!.strata.map((s) => s.band)).toEqual(["<0.9", ">=0.9"]);
    expect(audit!.byOption.map((o) => o.option)).toEqual(["billing"]);
    expect(auditLines(audit!)[0]).toMatch(
      /^posts: wrong automatic actions since 2026-11-01: \d+\.\d% \(95% interval/,
    );
  });
});
