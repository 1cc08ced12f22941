/**
 * A refused review says why (its kind), and the HTTP layer alone picks the status, in one place:
 * the review pages answer every route's refusal through one error handler, the review API with
 * the same table. Before, the use case's error carried an HTTP status and four try/catch blocks
 * each turned it into a page.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { REVIEW } from "../../shared/domain/topology.ts";
import { createReviewApp } from "../../shared/pages/review-page.ts";
import { REVIEW_REFUSAL_STATUS } from "../../shared/pages/review-refusals.ts";
import { ReviewError } from "../../shared/use-cases/review/review-decision.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

function app(store = new InMemoryDecisionStore()) {
  return createReviewApp({
    store,
    policies: new PolicyRegistry([TEAMS_POLICY]),
    publisher: { publish: async () => {} },
    timings: REVIEW,
    pageSize: REVIEW.pageSize,
    now: () => new Date(Date.UTC(2030, 4, 1)),
    identify: async () => ({ id: "u1", name: "Ana", groups: ["reviewers"] }),
  });
}

describe("a refused review", () => {
  it("carries a kind, not an HTTP status", () => {
    const refused = new ReviewError("taken", "conflict");
    expect(refused.kind).toBe("conflict");
    expect("status" in refused).toBe(false);
  });

  it("has one status per kind, in the HTTP layer", () => {
    expect(REVIEW_REFUSAL_STATUS).toEqual({ forbidden: 403, not_found: 404, conflict: 409, invalid: 422 });
  });

  it("is an error page with its status on the item page (the app's one error handler)", async () => {
    const response = await app().request(`/items/${TEAMS_POLICY.id}/1/NOPE`);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain("no decision for NOPE");
  });

  it("leaves any other failure to answer 500, as before", async () => {
    const store = new InMemoryDecisionStore();
    store.get = async () => {
      throw new Error("the table is gone");
    };
    const quiet = console.error;
    console.error = () => {};
    try {
      const response = await app(store).request(`/items/${TEAMS_POLICY.id}/1/X`);
      expect(response.status).toBe(500);
    } finally {
      console.error = quiet;
    }
  });
});
