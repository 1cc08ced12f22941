/**
 * The review JSON API marks a near-duplicate (issue 40): `POST /api/reviews` with `action:
 * "duplicate"` and `of` does what the review page's "Near-duplicate of item" does (the use case
 * `markDuplicate`, with its refusals), its body checked by the schema with a precise error; the
 * mark is the record's `group`, which the answer and `GET` show.
 */
import { describe, expect, it } from "vitest";
import { createReviewHandler } from "../../functions/review.ts";
import { localLambdaContext } from "../../infra/local/sqs/sqs-poller.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { groupKeyOf } from "../../shared/domain/calibration/certificate/group-key.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const POLICY = parsePolicy({ ...MODERATION, id: "dup-api" });

const record = (itemId: string, state: string, label?: string): DecisionRecord => ({
  itemId,
  policyId: POLICY.id,
  policyVersion: POLICY.version,
  status: label ? "reviewed" : "pending_review",
  route: "human",
  reason: "below_threshold",
  chosen: "allow",
  topProbability: 0.7,
  rawLogits: [1, 0, 0, 0],
  state,
  ...(label ? { label, reviewer: "Ana", reviewerId: "ana", reviewedAt: "2026-11-30T10:00:00.000Z" } : {}),
  createdAt: "2026-11-30T09:00:00.000Z",
  updatedAt: "2026-11-30T09:00:00.000Z",
  eventPublished: true,
});

async function api() {
  const store = new InMemoryDecisionStore();
  await store.create(record("A", "a photo of a cat, caption one", "allow"));
  await store.create(record("B", "entirely different words for the same picture"));
  await store.create(record("C", "another post", "remove"));
  const deps = {
    store,
    policies: new PolicyRegistry([POLICY]),
    publisher: { publish: async () => undefined },
    now: () => new Date("2026-11-30T11:00:00.000Z"),
  };
  const review = createReviewHandler(async () => deps, {});
  const ana = { sub: "ana", name: "Ana", groups: JSON.stringify(["reviewers"]) };
  const call = async (method: string, body?: unknown) => {
    const answer = (await review(
      {
        requestContext: { http: { method }, authorizer: { lambda: ana } },
        body: body === undefined ? undefined : JSON.stringify(body),
      } as never,
      localLambdaContext("review"),
    )) as { statusCode: number; body: string };
    return { status: answer.statusCode, body: JSON.parse(answer.body) as Record<string, never> };
  };
  return { store, call };
}

const key = (itemId: string) => ({ itemId, policyId: POLICY.id, policyVersion: POLICY.version });

describe("POST /api/reviews, action duplicate", () => {
  it("puts the item into the other's group, as the page's action does, and GET shows the mark", async () => {
    const { store, call } = await api();
    const a = (await store.get(key("A")))!;
    const marked = await call("POST", { ...key("B"), action: "duplicate", of: "A" });
    expect(marked.status).toBe(201);
    expect(marked.body).toMatchObject({ stored: true, record: { itemId: "B", group: groupKeyOf(a) } });
    expect((await store.get(key("B")))!.group).toBe(groupKeyOf(a));
    const queue = await call("GET");
    const items = queue.body.items as unknown as DecisionRecord[];
    expect(items.find((r) => r.itemId === "B")).toMatchObject({ group: groupKeyOf(a) });
    // Again: nothing to change.
    expect(await call("POST", { ...key("B"), action: "duplicate", of: "A" })).toMatchObject({
      status: 200,
      body: { stored: false },
    });
  });

  it("refuses what the page refuses, with the use case's reasons", async () => {
    const { call } = await api();
    const conflict = await call("POST", { ...key("C"), action: "duplicate", of: "A" });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ error: { code: "review_refused" } });
    expect(JSON.stringify(conflict.body)).toMatch(/share one label/);
    const self = await call("POST", { ...key("C"), action: "duplicate", of: "C" });
    expect(self.status).toBe(422);
    expect(JSON.stringify(self.body)).toMatch(/name another item/);
    const unknown = await call("POST", { ...key("C"), action: "duplicate", of: "Z" });
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.body)).toMatch(/no decision for Z/);
  });

  it("checks the body with a precise error", async () => {
    const { call } = await api();
    const invalid = async (body: unknown) => {
      const answer = await call("POST", body);
      expect(answer.status).toBe(422);
      return answer.body.error as unknown as { code: string; message: string; param?: string };
    };
    expect(await invalid({ ...key("B"), action: "duplicate" })).toEqual({
      type: "invalid_request_error",
      code: "invalid_value",
      message: "of: of is required when action is duplicate: the item this one duplicates",
      param: "of",
    });
    expect(await invalid({ ...key("B"), action: "duplicate", of: "  " })).toMatchObject({
      message: "of: name the item this one duplicates",
      param: "of",
    });
    expect(await invalid({ ...key("B"), action: "duplicate", of: "A", label: "allow" })).toMatchObject({
      message: "label: label is not taken with action duplicate: it marks, it does not label",
      param: "label",
    });
    expect(await invalid({ ...key("B"), action: "label", label: "allow", of: "A" })).toMatchObject({
      message: "of: of is taken only with action duplicate, not label",
      param: "of",
    });
    expect(await invalid({ ...key("B"), action: "merge", of: "A" })).toMatchObject({ param: "action" });
  });
});
