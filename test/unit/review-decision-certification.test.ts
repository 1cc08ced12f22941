/**
 * Certification samples reviewed twice (issue 40, "labels a certificate can stand on"): under
 * `certificationReviewers: 2` (the default) a drawn item keeps no label until two different
 * reviewers agree or an admin settles their disagreement, so a half-reviewed sample never backs a
 * certificate; `certificationReviewers: 1` lets one label settle it. The review pages mark
 * certification samples only for admins (the lead): reviewers label them like any other item.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { answerability, type Reviewer } from "../../shared/domain/review/review.ts";
import { decisionFilters, decisionsBody } from "../../shared/pages/decisions-view.ts";
import { REVIEW_REFUSAL_STATUS } from "../../shared/pages/review-refusals.ts";
import { badges, itemCard, reasonText } from "../../shared/pages/review-views.ts";
import {
  claimNext,
  labelItem,
  type ReviewDependencies,
  ReviewError,
  reviseLabel,
} from "../../shared/use-cases/review/review-decision.ts";

const BASE = {
  id: "moderation",
  version: 1,
  question: "What happens to this post?",
  type: "choice",
  options: [
    { id: "allow", description: "Allow", automate: true },
    { id: "remove", description: "Remove", automate: false },
  ],
  autoThreshold: 0.9,
};

const ana: Reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
const bo: Reviewer = { id: "bo", name: "Bo", groups: ["reviewers"] };
const cy: Reviewer = { id: "cy", name: "Cy", groups: ["reviewers"] };
const lead: Reviewer = { id: "lead", name: "Lead", groups: ["admins"] };

const key = { itemId: "POST-1", policyId: "moderation", policyVersion: 1 };

/** An automated decision drawn for a certification sample, waiting in the queue. */
const drawn: DecisionRecord = {
  ...key,
  status: "pending_review",
  route: "auto",
  reason: "confident",
  chosen: "allow",
  action: "posts:allow",
  distribution: { allow: 0.97, remove: 0.03 },
  topProbability: 0.97,
  certification: {
    sample: "s-1",
    drawnAt: "2026-11-30T09:30:00.000Z",
    minProbability: 0.9,
    edges: [],
    rates: [0.25],
    band: 0,
    inclusionProbability: 0.25,
  },
  queuedAt: "2026-11-30T09:30:00.000Z",
  createdAt: "2026-11-30T09:00:00.000Z",
  updatedAt: "2026-11-30T09:30:00.000Z",
  eventPublished: true,
};

async function setup(knob: Record<string, unknown> = {}) {
  const policy = parsePolicy({ ...BASE, ...knob });
  const store = new InMemoryDecisionStore();
  const events: PipelineEvent[] = [];
  const deps: ReviewDependencies = {
    store,
    publisher: { publish: async (batch) => void events.push(...batch) },
    policies: new PolicyRegistry([policy]),
    now: () => new Date("2026-11-30T10:00:00.000Z"),
    timings: { claimMs: 5 * 60_000, changeWindowMs: 10 * 60_000 },
  };
  await store.create(drawn);
  const reviewed = () => events.filter((e) => e.detailType === "Decision Reviewed");
  return { deps, store, reviewed, policy, get: async () => (await store.get(key))! };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 0,
    (e: unknown) => (e instanceof ReviewError ? REVIEW_REFUSAL_STATUS[e.kind] : -1),
  );

describe("certification samples reviewed twice", () => {
  it("defaults to two reviewers: a certification sample labelled once stays unlabelled", async () => {
    const t = await setup();
    expect(t.policy.certificationReviewers).toBe(2);
    const first = await labelItem({ ...key, label: "allow" }, ana, t.deps);
    expect(first).toMatchObject({ stored: true, final: false });
    const after = await t.get();
    expect(after.status).toBe("pending_review");
    expect(after.label).toBeUndefined();
    expect(after.firstReview).toMatchObject({ label: "allow", reviewerId: "ana" });
    expect(t.reviewed()).toHaveLength(0);
  });

  it("settles the label when a second, different reviewer agrees", async () => {
    const t = await setup();
    await labelItem({ ...key, label: "remove" }, ana, t.deps);
    const second = await labelItem({ ...key, label: "remove" }, bo, t.deps);
    expect(second).toMatchObject({ stored: true, final: true });
    expect(await t.get()).toMatchObject({ status: "reviewed", label: "remove", reviewerId: "bo" });
    expect(t.reviewed()).toHaveLength(1);
  });

  it("refuses the same reviewer's second label, and does not offer them the item again", async () => {
    const t = await setup();
    await labelItem({ ...key, label: "allow" }, ana, t.deps);
    expect(await refusal(labelItem({ ...key, label: "allow" }, ana, t.deps))).toBe(409);
    expect((await t.get()).label).toBeUndefined();
    const may = answerability(await t.get(), ana, Date.parse("2026-11-30T10:00:00.000Z"));
    expect(may.ok).toBe(false);
    // The refusal does not tell a reviewer that the item backs a certificate.
    expect(may.ok ? "" : may.reason).not.toMatch(/certif|audit/i);
    expect(await claimNext(ana, t.deps)).toBeUndefined();
    expect((await claimNext(bo, t.deps))?.itemId).toBe(key.itemId);
  });

  it("sends a disagreement to an admin: no third reviewer settles it, and it stays unlabelled till then", async () => {
    const t = await setup();
    await labelItem({ ...key, label: "allow" }, ana, t.deps);
    expect(await labelItem({ ...key, label: "remove" }, bo, t.deps)).toMatchObject({ final: false });
    expect(await t.get()).toMatchObject({ status: "pending_review", disputed: true });
    expect((await t.get()).label).toBeUndefined();
    expect(await refusal(labelItem({ ...key, label: "remove" }, cy, t.deps))).toBe(403);
    expect(await labelItem({ ...key, label: "remove" }, lead, t.deps)).toMatchObject({ final: true });
    expect(await t.get()).toMatchObject({ status: "reviewed", label: "remove", reviewer: "Lead" });
    expect(t.reviewed()).toHaveLength(1);
  });

  it("lets neither reviewer change a settled label alone: undo sends it back for two new labels", async () => {
    const t = await setup();
    await labelItem({ ...key, label: "allow" }, ana, t.deps);
    await labelItem({ ...key, label: "allow" }, bo, t.deps);
    expect(await refusal(reviseLabel(key, "remove", bo, t.deps))).toBe(403);
    expect((await t.get()).label).toBe("allow");
    await reviseLabel(key, undefined, bo, t.deps);
    expect(await labelItem({ ...key, label: "remove" }, bo, t.deps)).toMatchObject({ final: false });
    expect((await t.get()).label).toBeUndefined();
    // An admin may change it, as for any label.
    await labelItem({ ...key, label: "remove" }, cy, t.deps);
    expect(await reviseLabel(key, "allow", lead, t.deps)).toMatchObject({ final: true });
    expect((await t.get()).label).toBe("allow");
  });

  it("lets one label settle it with certificationReviewers: 1", async () => {
    const t = await setup({ certificationReviewers: 1 });
    expect(await labelItem({ ...key, label: "allow" }, ana, t.deps)).toMatchObject({ final: true });
    expect(await t.get()).toMatchObject({ status: "reviewed", label: "allow" });
    expect(() => parsePolicy({ ...BASE, certificationReviewers: 3 })).toThrow(/certificationReviewers/);
  });
});

describe("the review pages mark certification samples only for the lead", () => {
  it("shows a reviewer neither the badge nor the reason, and an admin both", async () => {
    const t = await setup();
    expect(badges(drawn, ana, 0)).not.toMatch(/certification/i);
    expect(reasonText(drawn, t.policy, ana)).not.toMatch(/certification|drawn at random/i);
    expect(reasonText(drawn, t.policy, ana)).toMatch(/already applied/);
    expect(reasonText(drawn, t.policy)).not.toMatch(/certification/i);
    expect(badges(drawn, lead, 0)).toContain("certification sample");
    expect(reasonText(drawn, t.policy, lead)).toMatch(
      /^Certification sample: drawn at random \(chance 25%\)/,
    );
  });

  it("does not show the second reviewer the first label (their labels stay independent)", async () => {
    const t = await setup();
    await labelItem({ ...key, label: "remove" }, ana, t.deps);
    const waiting = await t.get();
    const card = (viewer: Reviewer) =>
      itemCard(waiting, t.policy, viewer, { now: 0, csrf: "x", mayAnswer: true, mayRevise: false });
    expect(card(bo)).toContain("Ana gave the first label");
    expect(card(bo)).not.toContain("gave the first label <strong>");
    expect(card(lead)).toContain("Ana gave the first label <strong>Remove</strong>");
  });

  it("says the same on the decisions view, whose reasons follow who looks", async () => {
    const t = await setup();
    const registry = new PolicyRegistry([t.policy]);
    const body = (viewer: Reviewer) =>
      decisionsBody({ records: [drawn], continued: false }, decisionFilters({}, registry), registry, viewer);
    expect(body(ana)).not.toMatch(/certification/i);
    expect(body(ana)).toContain("Spot check");
    expect(body(lead)).toContain("Certification sample: drawn at random");
  });
});
