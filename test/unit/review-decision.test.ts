/**
 * The review use cases on the in-memory store (the DynamoDB store passes the same contract):
 * claims keep a second reviewer off an item until they expire, a label is stored once with its
 * history, its reviewer may change or undo it only within the window, an admin at any time, audit
 * samples of a two-reviewer policy need two different people and a disagreement goes to an admin,
 * and each stored label, change and undo emits its event once.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { Reviewer } from "../../shared/domain/review/review.ts";
import { REVIEW_REFUSAL_STATUS } from "../../shared/pages/review-refusals.ts";
import {
  claimItem,
  claimNext,
  labelItem,
  type ReviewDependencies,
  ReviewError,
  reviseLabel,
} from "../../shared/use-cases/review/review-decision.ts";

const policy = parsePolicy({
  id: "moderation",
  version: 1,
  question: "What happens to this post?",
  type: "choice",
  options: [
    { id: "allow", description: "Allow", automate: true },
    { id: "remove", description: "Remove", automate: false },
  ],
  autoThreshold: 0.9,
  auditSampleRate: 0.1,
  auditReviewers: 2,
});

const ana: Reviewer = { id: "ana", name: "Ana", groups: ["reviewers"] };
const bo: Reviewer = { id: "bo", name: "Bo", groups: ["reviewers"] };
const admin: Reviewer = { id: "root", name: "Root", groups: ["admins"] };
const outsider: Reviewer = { id: "eve", name: "Eve", groups: [] };

function setup(reason: DecisionRecord["reason"] = "below_threshold") {
  const store = new InMemoryDecisionStore();
  const events: PipelineEvent[] = [];
  let clock = Date.parse("2026-11-30T10:00:00.000Z");
  const deps: ReviewDependencies = {
    store,
    publisher: { publish: async (batch) => void events.push(...batch) },
    policies: new PolicyRegistry([policy]),
    now: () => new Date(clock),
    timings: { claimMs: 5 * 60_000, changeWindowMs: 10 * 60_000 },
  };
  const key = { itemId: "POST-1", policyId: "moderation", policyVersion: 1 };
  const record: DecisionRecord = {
    ...key,
    status: "pending_review",
    route: "human",
    reason,
    chosen: "allow",
    distribution: { allow: 0.7, remove: 0.3 },
    topProbability: 0.7,
    createdAt: "2026-11-30T09:00:00.000Z",
    updatedAt: "2026-11-30T09:00:00.000Z",
    eventPublished: true,
  };
  return {
    deps,
    key,
    events,
    store,
    create: () => store.create(record),
    advance: (ms: number) => {
      clock += ms;
    },
  };
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => (e instanceof ReviewError ? REVIEW_REFUSAL_STATUS[e.kind] : e),
  );

describe("review use cases", () => {
  it("claims an item for one reviewer until the claim expires", async () => {
    const t = setup();
    await t.create();
    expect((await claimItem(t.key, ana, t.deps)).claimed).toBe(true);
    const second = await claimItem(t.key, bo, t.deps);
    expect(second).toMatchObject({ claimed: false, holder: { reviewerId: "ana", reviewerName: "Ana" } });
    expect(await refusal(labelItem({ ...t.key, label: "allow" }, bo, t.deps))).toBe(409);
    t.advance(5 * 60_000 + 1);
    expect((await claimItem(t.key, bo, t.deps)).claimed).toBe(true);
    expect(await refusal(labelItem({ ...t.key, label: "allow" }, ana, t.deps))).toBe(409);
    expect((await labelItem({ ...t.key, label: "allow" }, bo, t.deps)).stored).toBe(true);
    expect((await t.store.get(t.key))!.claim).toBeUndefined();
  });

  it("lets only an admin take over a claim, and never claims for someone who may not answer", async () => {
    const t = setup("audit_sample");
    await t.create();
    expect((await claimItem(t.key, ana, t.deps)).claimed).toBe(true);
    expect(await refusal(claimItem(t.key, bo, t.deps, { takeOver: true }))).toBe(403);
    expect(await claimItem(t.key, admin, t.deps, { takeOver: true })).toMatchObject({
      claimed: true,
      record: { claim: { reviewerId: "root" } },
    });
    // Ana's first audit label (after the admin lets go): Ana cannot claim it again, Bo can.
    t.advance(5 * 60_000 + 1);
    expect((await labelItem({ ...t.key, label: "allow" }, ana, t.deps)).final).toBe(false);
    expect(await refusal(claimItem(t.key, ana, t.deps))).toBe(409);
    expect((await t.store.get(t.key))!.claim).toBeUndefined();
    expect((await claimItem(t.key, bo, t.deps)).claimed).toBe(true);
  });

  it("claims the oldest item the reviewer may answer, skipping ones held by others", async () => {
    const t = setup();
    await t.create();
    const other = { ...t.key, itemId: "T-2" };
    await t.store.create({ ...(await t.store.get(t.key))!, ...other, createdAt: "2026-11-30T09:30:00.000Z" });
    expect((await claimNext(ana, t.deps))?.itemId).toBe(t.key.itemId);
    expect((await claimNext(bo, t.deps))?.itemId).toBe("T-2");
    expect(await claimNext({ ...bo, id: "cy", name: "Cy" }, t.deps)).toBeUndefined();
  });

  it("refuses people outside the reviewer groups and labels outside the options", async () => {
    const t = setup();
    await t.create();
    expect(await refusal(claimItem(t.key, outsider, t.deps))).toBe(403);
    expect(await refusal(labelItem({ ...t.key, label: "allow" }, outsider, t.deps))).toBe(403);
    expect(await refusal(labelItem({ ...t.key, label: "maybe" }, ana, t.deps))).toBe(422);
    expect(await refusal(labelItem({ ...t.key, itemId: "NOPE", label: "allow" }, ana, t.deps))).toBe(404);
  });

  it("stores a label once, lets its reviewer change it within the window, and an admin at any time", async () => {
    const t = setup();
    await t.create();
    expect((await labelItem({ ...t.key, label: "allow" }, ana, t.deps)).stored).toBe(true);
    expect((await labelItem({ ...t.key, label: "allow" }, ana, t.deps)).stored).toBe(false);
    expect(await refusal(labelItem({ ...t.key, label: "remove" }, ana, t.deps))).toBe(409);
    expect(await refusal(reviseLabel(t.key, "remove", bo, t.deps))).toBe(403);
    t.advance(9 * 60_000);
    expect((await reviseLabel(t.key, "remove", ana, t.deps)).stored).toBe(true);
    t.advance(11 * 60_000);
    expect(await refusal(reviseLabel(t.key, "allow", ana, t.deps))).toBe(403);
    expect((await reviseLabel(t.key, undefined, admin, t.deps)).final).toBe(false);
    const undone = (await t.store.get(t.key))!;
    expect(undone.status).toBe("pending_review");
    expect(undone.label).toBeUndefined();
    expect(undone.reviewHistory?.map((e) => [e.action, e.label ?? null, e.reviewerId])).toEqual([
      ["label", "allow", "ana"],
      ["change", "remove", "ana"],
      ["undo", null, "root"],
    ]);
    // After the undo the item is labelled afresh, and that label is announced again.
    expect((await labelItem({ ...t.key, label: "allow" }, bo, t.deps)).stored).toBe(true);
    const kinds = t.events.map((e) => [e.detailType, e.detail.label ?? null]);
    expect(kinds).toEqual([
      ["Decision Reviewed", "allow"],
      ["Decision Review Revised", "remove"],
      ["Decision Review Revised", null],
      ["Decision Reviewed", "allow"],
    ]);
    expect(new Set(t.events.map((e) => e.detail.eventId)).size).toBe(4);
  });

  it("needs two different reviewers for an audit sample, and sends a disagreement to an admin", async () => {
    const agree = setup("audit_sample");
    await agree.create();
    expect((await labelItem({ ...agree.key, label: "allow" }, ana, agree.deps)).final).toBe(false);
    expect(await refusal(labelItem({ ...agree.key, label: "allow" }, ana, agree.deps))).toBe(409);
    expect((await labelItem({ ...agree.key, label: "allow" }, bo, agree.deps)).final).toBe(true);
    expect((await agree.store.get(agree.key))!).toMatchObject({ status: "reviewed", label: "allow" });

    const differ = setup("audit_sample");
    await differ.create();
    await labelItem({ ...differ.key, label: "allow" }, ana, differ.deps);
    expect((await labelItem({ ...differ.key, label: "remove" }, bo, differ.deps)).final).toBe(false);
    const disputed = (await differ.store.get(differ.key))!;
    expect(disputed).toMatchObject({ status: "pending_review", disputed: true });
    expect(
      await refusal(labelItem({ ...differ.key, label: "remove" }, { ...ana, id: "cy" }, differ.deps)),
    ).toBe(403);
    expect((await labelItem({ ...differ.key, label: "remove" }, admin, differ.deps)).final).toBe(true);
    expect(differ.events.filter((e) => e.detailType === "Decision Reviewed")).toHaveLength(1);
    expect((await differ.store.get(differ.key))!.reviewHistory?.map((e) => e.action)).toEqual([
      "first_label",
      "label",
      "label",
    ]);
  });

  it("lets exactly one of two reviewers racing on one item store a label", async () => {
    const t = setup();
    await t.create();
    const results = await Promise.allSettled([
      labelItem({ ...t.key, label: "allow" }, ana, t.deps),
      labelItem({ ...t.key, label: "remove" }, bo, t.deps),
    ]);
    expect(results.filter((r) => r.status === "fulfilled" && r.value.stored)).toHaveLength(1);
    expect(t.events.filter((e) => e.detailType === "Decision Reviewed")).toHaveLength(1);
  });
});

describe("review backlog", () => {
  it("counts pending items and the oldest wait per policy, against each policy's limit, with zeros when none waits", async () => {
    const { reviewBacklog } = await import("../../shared/use-cases/review/review-backlog.ts");
    const t = setup();
    await t.create(); // created 09:00, the clock says 10:00
    const other = parsePolicy({ ...policy, id: "tickets", reviewWithinMinutes: 30 });
    const deps = { store: t.store, policies: new PolicyRegistry([policy, other]) };
    expect(await reviewBacklog(deps, new Date("2026-11-30T10:00:30.000Z"), 45)).toEqual([
      { policyId: "moderation", pending: 1, oldestMinutes: 60, limitMinutes: 45, overdue: true },
      { policyId: "tickets", pending: 0, oldestMinutes: 0, limitMinutes: 30, overdue: false },
    ]);
  });
});
