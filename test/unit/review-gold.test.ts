/**
 * Gold items (issue 40, "labels a certificate can stand on"): decisions whose answer the lead
 * knows, loaded from a file with precise errors, mixed into the review queue unmarked; each
 * reviewer's answers measure their accuracy; the item settles with the known answer once enough
 * reviewers answered; a reviewer's page and the JSON API never show that an item is gold (an
 * admin's do); and gold labels never back a certificate.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { Reviewer } from "../../shared/domain/review/review.ts";
import { parseGoldFile } from "../../shared/domain/review/review-gold.ts";
import { badges, itemCard, reasonText } from "../../shared/pages/review-views.ts";
import { loadGold, reviewerAccuracyOf, viewedBy } from "../../shared/use-cases/review/gold-items.ts";
import {
  claimNext,
  labelItem,
  type ReviewDependencies,
} from "../../shared/use-cases/review/review-decision.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";

const POLICY = parsePolicy({
  id: "moderation",
  version: 1,
  question: "What happens to this post?",
  type: "choice",
  options: [
    { id: "allow", description: "Allow", automate: true },
    { id: "remove", description: "Remove", automate: true },
  ],
  autoThreshold: 0.9,
  auditSampleRate: 0.05,
});

const ana: Reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
const bo: Reviewer = { id: "bo", name: "Bo", groups: ["reviewers"] };
const lead: Reviewer = { id: "lead", name: "Lead", groups: ["admins"] };

/** Decision `i`: automated (even) or escalated below the threshold (odd). */
function decision(i: number): DecisionRecord {
  const auto = i % 2 === 0;
  const at = new Date(Date.UTC(2026, 10, 30, 9) + i * 60_000).toISOString();
  return {
    itemId: `P-${i}`,
    policyId: POLICY.id,
    policyVersion: 1,
    status: auto ? "actioned" : "pending_review",
    route: auto ? "auto" : "human",
    reason: auto ? "confident" : "below_threshold",
    chosen: "allow",
    topProbability: auto ? 0.97 : 0.7,
    rawLogits: auto ? [3.5, 0] : [0.85, 0],
    state: `post number ${i}`,
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
}

async function setup(count = 20) {
  const store = new InMemoryDecisionStore();
  for (let i = 0; i < count; i++) await store.create(decision(i));
  const policies = new PolicyRegistry([POLICY]);
  const now = () => new Date("2026-11-30T12:00:00.000Z");
  const deps: ReviewDependencies = {
    store,
    policies,
    publisher: { publish: async () => undefined },
    now,
    timings: { claimMs: 5 * 60_000, changeWindowMs: 10 * 60_000 },
  };
  return { store, policies, deps, gold: { store, policies, now } };
}

/** Gold lines for items 0..n-1, every known answer "remove". */
const goldFile = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    JSON.stringify({ itemId: `P-${i}`, policy: "moderation", answer: "remove" }),
  ).join("\n");

describe("a gold file", () => {
  it("is refused with every problem on its line, and nothing is loaded", async () => {
    const text = [
      `{"itemId":"P-0","policy":"moderation","answer":"remove"}`,
      `not json`,
      `{"itemId":"P-1","policy":"moderation"}`,
      `{"itemId":"P-2","policy":"moderation","answer":"remove","note":"x"}`,
      `{"itemId":"P-0","policy":"moderation","answer":"remove"}`,
      `{"itemId":"P-3","policy":"moderation","answer":"remove","version":0}`,
    ].join("\n");
    const parsed = parseGoldFile(text);
    expect(parsed.problems.map((p) => p.line)).toEqual([2, 3, 4, 5, 6]);
    expect(parsed.problems[1]!.reason).toBe("answer: must be the id of one of the policy's options");
    expect(parsed.problems[2]!.reason).toMatch(/unknown field "note"/);
    expect(parsed.problems[3]!.reason).toBe(`itemId: "P-0" is already on line 1`);

    const t = await setup(4);
    const lines = [
      { itemId: "P-0", policy: "moderation", answer: "remove", line: 1 },
      { itemId: "P-9", policy: "moderation", answer: "remove", line: 2 },
      { itemId: "P-1", policy: "moderation", answer: "block", line: 3 },
      { itemId: "P-1", policy: "nope", answer: "remove", line: 4 },
    ];
    const load = await loadGold(t.gold, lines, { loadedBy: "Lead" });
    expect(load.problems).toEqual([
      {
        line: 2,
        reason: `itemId: no decision for "P-9" under moderation@1: send the item through the pipeline first`,
      },
      { line: 3, reason: `answer: "block" is not an option of moderation@1 (allow, remove)` },
      { line: 4, reason: "policy: nope is not a known policy version" },
    ]);
    expect(
      (await t.store.get({ itemId: "P-0", policyId: "moderation", policyVersion: 1 }))?.gold,
    ).toBeUndefined();
    expect(
      (await loadGold(t.gold, lines.slice(0, 1), { loadedBy: "Lead", reviews: 0 })).problems[0]!.reason,
    ).toMatch(/^reviews: must be a whole number from 1 to 10/);
  });
});

describe("gold items in the queue", () => {
  it("measure each reviewer's accuracy, then settle with the known answer", async () => {
    const t = await setup(20);
    const parsed = parseGoldFile(goldFile(20));
    const load = await loadGold(
      t.gold,
      parsed.lines.map((l, i) => ({ ...l, line: i + 1 })),
      { loadedBy: "Lead", reviews: 2 },
    );
    expect(load).toMatchObject({ queued: 10, marked: 10, problems: [] });
    // Ana is always right; Bo says "allow" (the model's answer) on every fourth item.
    for (const [reviewer, wrongEvery] of [
      [ana, 0],
      [bo, 4],
    ] as const) {
      for (let n = 0; ; n++) {
        const item = await claimNext(reviewer, t.deps);
        if (!item) break;
        const label = wrongEvery && n % wrongEvery === 0 ? "allow" : "remove";
        const outcome = await labelItem({ ...item, label }, reviewer, t.deps);
        expect(outcome.stored).toBe(true);
        expect(n).toBeLessThan(20);
      }
    }
    const accuracy = await reviewerAccuracyOf(t.store, "moderation");
    expect(accuracy.map((a) => [a.reviewerName, a.answered, a.right])).toEqual([
      ["Ana", 20, 20],
      ["Bo", 20, 15],
    ]);
    expect(accuracy[1]!.accuracy).toBe(0.75);
    expect(accuracy[1]!.interval[0]).toBeLessThan(0.75);
    expect(accuracy[1]!.interval[1]).toBeGreaterThan(0.75);
    const settled = (await t.store.get({ itemId: "P-3", policyId: "moderation", policyVersion: 1 }))!;
    expect(settled).toMatchObject({ status: "reviewed", label: "remove", reviewer: "Lead" });
  });

  it("never count as the model's evidence: a certificate's rows leave them out", async () => {
    const t = await setup(6);
    // Items 0 and 1 are gold; items 2..5 are labelled by reviewers as usual.
    const lines = [0, 1].map((i) => ({
      itemId: `P-${i}`,
      policy: "moderation",
      answer: "remove",
      line: i + 1,
    }));
    await loadGold(t.gold, lines, { loadedBy: "Lead", reviews: 1 });
    for (let i = 0; i < 6; i++) {
      const key = { itemId: `P-${i}`, policyId: "moderation", policyVersion: 1 };
      if (i >= 2 && i % 2 === 0) continue; // automated, not in the queue
      await labelItem({ ...key, label: "remove" }, ana, t.deps);
    }
    const gold = await t.store.get({ itemId: "P-0", policyId: "moderation", policyVersion: 1 });
    expect(gold).toMatchObject({ status: "reviewed", label: "remove" });
    const { rows, missing, reviewers } = await reviewedLabels(t.store, POLICY);
    expect(rows.map((r) => r.key).sort()).toEqual(["P-3", "P-5"]);
    expect(missing).toEqual([]);
    // What they measure instead: the reviewer (the report's reviewer section reads this).
    expect(reviewers).toMatchObject([{ reviewerName: "Ana", answered: 2, right: 2 }]);
  });
});

describe("a reviewer cannot tell a gold item", () => {
  it("on the item page, the queue row and the JSON API; an admin can", async () => {
    const t = await setup(2);
    await loadGold(t.gold, [{ itemId: "P-0", policy: "moderation", answer: "remove", line: 1 }], {
      loadedBy: "Lead",
      reviews: 2,
    });
    const key = { itemId: "P-0", policyId: "moderation", policyVersion: 1 };
    const gold = (await t.store.get(key))!;
    const { gold: _, ...plain } = gold;
    const card = (r: DecisionRecord, viewer: Reviewer) =>
      itemCard(viewedBy(r, viewer), POLICY, viewer, { now: 0, csrf: "x", mayAnswer: true, mayRevise: false });
    // The same page as for the same automated decision drawn without gold.
    expect(card(gold, bo)).toBe(card(plain, bo));
    expect(card(gold, bo)).not.toMatch(/gold|known answer/i);
    expect(reasonText(viewedBy(gold, bo), POLICY, bo)).toMatch(/^Spot check/);
    expect(JSON.stringify(viewedBy(gold, bo))).not.toMatch(/gold|loadedBy/);
    // Answered by Ana: Bo still sees nothing; Ana sees a sample waiting for its second review.
    await labelItem({ ...key, label: "allow" }, ana, t.deps);
    const answered = (await t.store.get(key))!;
    expect(card(answered, bo)).not.toMatch(/gold|known answer|Ana/i);
    expect(viewedBy(answered, ana)).toMatchObject({ firstReview: { label: "allow", reviewerId: "ana" } });
    expect(JSON.stringify(viewedBy(answered, ana))).not.toMatch(/gold|remove/);
    expect(await claimNext(ana, t.deps)).toMatchObject({ itemId: "P-1" });
    // The lead sees the badge, the known answer and who answered what.
    expect(badges(answered, lead, 0)).toContain("gold item");
    expect(reasonText(answered, POLICY, lead)).toMatch(
      /^Gold item: known answer <em>Remove<\/em>; answered by Ana \(Allow\) \(1 of 2\)/,
    );
  });
});
