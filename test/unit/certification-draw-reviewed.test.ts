/**
 * Issue 40 (labels a certificate can stand on): under double review of certification samples, an
 * item already reviewed once (an audit sample labelled by one reviewer, or one waiting for its
 * second) must never become a certification draw that backs a claim on that single review. The
 * draw takes only automated decisions never chosen for a label; such items are left out and
 * counted as chosen before, and an item reviewed between the read and the write is left out too.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const POLICY = parsePolicy({ ...MODERATION, certificationReviewers: 2 });
const at = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString();

/** 40 automated decisions, 5 audit samples labelled once, 5 waiting for their second reviewer. */
async function store(): Promise<InMemoryDecisionStore> {
  const s = new InMemoryDecisionStore();
  for (let i = 0; i < 50; i++) {
    const audit = i >= 40;
    const record: DecisionRecord = {
      itemId: `D${i}`,
      policyId: POLICY.id,
      policyVersion: POLICY.version,
      status: !audit ? "actioned" : i < 45 ? "reviewed" : "pending_review",
      route: audit ? "human" : "auto",
      reason: audit ? "audit_sample" : "confident",
      chosen: "allow",
      topProbability: 0.9 + i / 1_000,
      createdAt: at(i),
      updatedAt: at(i),
      eventPublished: true,
      ...(audit && i < 45 ? { label: "allow", reviewer: "A", reviewerId: "a", reviewedAt: at(60) } : {}),
      ...(audit && i >= 45
        ? { firstReview: { label: "allow", reviewerId: "a", reviewerName: "A", at: at(60) } }
        : {}),
    };
    await s.create(record);
  }
  return s;
}

describe("a certification draw under double review", () => {
  it("never takes an item reviewed once: all ten are left out and counted as chosen before", async () => {
    const s = await store();
    const now = () => new Date("2026-12-01T00:00:00.000Z");
    const out = await requestCertification(
      { store: s, now },
      { policy: POLICY, size: 50, minProbability: 0.85, order: "by-time" },
    );
    expect(out).toMatchObject({ queued: 40, skipped: 0, chosenBefore: 10, population: 40 });
    for (let i = 40; i < 50; i++) {
      const r = await s.get({ itemId: `D${i}`, policyId: POLICY.id, policyVersion: POLICY.version });
      expect(r?.certification, `D${i}`).toBeUndefined();
    }
  });

  it("leaves out an item reviewed between the read and the write", async () => {
    const s = await store();
    const transition = s.transition.bind(s);
    let first = true;
    s.transition = async (record, from, to, changes) => {
      if (first) {
        first = false;
        // A reviewer labels this one just before the draw writes it.
        await transition(record, from, "reviewed", { label: "allow" });
      }
      return transition(record, from, to, changes);
    };
    const now = () => new Date("2026-12-01T00:00:00.000Z");
    const out = await requestCertification(
      { store: s, now },
      { policy: POLICY, size: 40, minProbability: 0.85, order: "by-time" },
    );
    expect(out).toMatchObject({ queued: 39, skipped: 1 });
  });
});
