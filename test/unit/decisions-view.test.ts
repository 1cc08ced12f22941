/**
 * The decisions view's pages (observation 11 of issue 24): 120 decisions are shown 50 a page,
 * newest first, each page linking to the older ones with the same filters, within the window
 * the since and until dates give; a foreign cursor or a window that ends before it starts
 * answers 422. (Before, the view loaded every record since its date and cut the list at 500.)
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECISIONS_VIEW, REVIEW } from "../../shared/domain/topology.ts";
import { createReviewApp } from "../../shared/pages/review-page.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const DAY = 86_400_000;
const start = Date.UTC(2030, 4, 1);

function decision(i: number): DecisionRecord {
  const at = new Date(start + i * (DAY / 24)).toISOString(); // one an hour from 1 May 2030
  return {
    itemId: `V-${String(i).padStart(3, "0")}`,
    policyId: TEAMS_POLICY.id,
    policyVersion: 1,
    status: i % 3 === 0 ? "pending_review" : "auto_approved",
    route: i % 3 === 0 ? "human" : "auto",
    reason: i % 3 === 0 ? "below_threshold" : "confident",
    chosen: "billing",
    distribution: { billing: 0.9, technical: 0.1 },
    topProbability: 0.9,
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
}

async function setup() {
  const store = new InMemoryDecisionStore();
  for (let i = 0; i < 120; i++) await store.create(decision(i));
  const app = createReviewApp({
    store,
    policies: new PolicyRegistry([TEAMS_POLICY]),
    publisher: { publish: async () => {} },
    timings: REVIEW,
    pageSize: REVIEW.pageSize,
    now: () => new Date(start + 10 * DAY),
    identify: async () => ({ id: "u1", name: "Ana", groups: ["reviewers"] }),
  });
  const get = async (path: string) => {
    const response = await app.request(path);
    const body = await response.text();
    // The first cell of each row holds the item id, plain or as a link to its page.
    const ids = [...body.matchAll(/<tr><td[^>]*>(?:<a [^>]*>)?(V-\d+)</g)].map((m) => m[1]!);
    const next = /href="([^"]+)" rel="next"/.exec(body)?.[1]?.replaceAll("&amp;", "&");
    return { status: response.status, body, ids, next };
  };
  return { get };
}

describe("the decisions view", () => {
  it("pages through every decision newest first, 50 a page, with a link to the older ones", async () => {
    const { get } = await setup();
    const seen: string[] = [];
    let path: string | undefined = "/decisions";
    let pages = 0;
    while (path) {
      const page = await get(path);
      expect(page.status).toBe(200);
      expect(page.ids.length).toBeLessThanOrEqual(DECISIONS_VIEW.pageSize);
      seen.push(...page.ids);
      path = page.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => decision(119 - i).itemId));
  });

  it("keeps the filters and the window on every page", async () => {
    const { get } = await setup();
    // 2 May to 3 May inclusive: hours 24 to 71, of which every third is escalated.
    const first = await get("/decisions?route=human&since=2030-05-02&until=2030-05-03");
    const expected = Array.from({ length: 48 }, (_, i) => 71 - i)
      .filter((i) => i % 3 === 0)
      .map((i) => decision(i).itemId);
    expect(first.ids).toEqual(expected);
    expect(first.next).toBeUndefined();
    const auto = await get("/decisions?route=auto&since=2030-05-02&until=2030-05-03");
    expect(auto.ids).toHaveLength(DECISIONS_VIEW.pageSize - 18);
  });

  it("answers a foreign cursor and a window that ends before it starts with 422", async () => {
    const { get } = await setup();
    const foreign = await get("/decisions?cursor=not-a-cursor");
    expect(foreign.status).toBe(422);
    expect(foreign.body).toMatch(/cursor: (&quot;|")not-a-cursor(&quot;|") is not a page cursor/);
    const backwards = await get("/decisions?since=2030-05-03&until=2030-05-01");
    expect(backwards.status).toBe(422);
    expect(backwards.body).toMatch(/until: (&quot;|")2030-05-01(&quot;|") is not after since/);
  });
});
