/**
 * Where people read the live error rate: the decisions page's audit view (/decisions/audit) and
 * the calibration report written by the scheduled proposal both show each policy's audit
 * estimate with its interval and its error budget, from audit samples only. The decisions page
 * itself reads one page of decisions, its first as every other (issue 36, observation 6: its
 * first page read every item waiting for review, 23 s with about 1,900 waiting).
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { createReviewApp } from "../../shared/pages/review-page.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const policy = parsePolicy({ ...TEAMS_POLICY, auditSampleRate: 0.1, maxAutoError: 0.05 });
const NOW = new Date("2026-11-30T12:00:00.000Z");

/** 40 reviewed audit samples (4 wrong) and 20 reviewed escalations (all wrong: they must not count). */
async function storeWithAudits(): Promise<InMemoryDecisionStore> {
  const store = new InMemoryDecisionStore();
  const at = "2026-11-29T10:00:00.000Z";
  const record = (i: number, reason: "audit_sample" | "below_threshold", label: string): DecisionRecord => ({
    itemId: `T-${reason}-${i}`,
    policyId: "tickets",
    policyVersion: 1,
    status: "reviewed",
    route: "human",
    reason,
    chosen: "billing",
    rawLogits: [2, 0],
    label,
    ...(reason === "audit_sample" ? { auditBand: "all", auditInclusionProbability: 0.1 } : {}),
    reviewedAt: at,
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  });
  for (let i = 0; i < 40; i++)
    await store.create(record(i, "audit_sample", i % 10 === 0 ? "technical" : "billing"));
  for (let i = 0; i < 20; i++) await store.create(record(i, "below_threshold", "technical"));
  return store;
}

describe("the live error rate where people read it", () => {
  it("shows the audit estimate and the budget on the decisions page's audit view, not on its first page", async () => {
    const store = await storeWithAudits();
    const reads: string[] = [];
    const watched = Object.create(store) as InMemoryDecisionStore;
    watched.pendingSince = (policyId, since) => {
      reads.push(`pending ${policyId}`);
      return store.pendingSince(policyId, since);
    };
    watched.reviewedSince = (policyId, since) => {
      reads.push(`reviewed ${policyId}`);
      return store.reviewedSince(policyId, since);
    };
    const app = createReviewApp({
      store: watched,
      publisher: { publish: async () => undefined },
      policies: new PolicyRegistry([policy]),
      now: () => NOW,
      timings: { claimMs: 60_000, changeWindowMs: 60_000 },
      pageSize: 25,
      identify: async () => ({ id: "ana", name: "Ana", groups: ["reviewers"] }),
    });
    const first = await (await app.request("/decisions?policy=tickets")).text();
    expect(reads).toEqual([]);
    expect(first).toContain('href="/decisions/audit?policy=tickets"');
    expect(first).not.toContain('id="live-audit"');
    const body = await (await app.request("/decisions/audit?policy=tickets")).text();
    expect(reads).toEqual(["pending tickets", "reviewed tickets"]);
    expect(body).toContain('id="live-audit"');
    expect(body).toMatch(/10\.0% \(95% interval \d+\.\d% to \d+\.\d%; 40 audit labels, 4 wrong\)/);
    // 4 wrong of 40 against a 5% budget: the interval spans it, so the verdict asks for labels.
    expect(body).toMatch(
      /NOT ENOUGH AUDIT LABELS to judge maxAutoError 5\.0%: .*about 80 more audit labels would settle it \(80 in v1 band all\)/,
    );
  });

  it("adds the estimate to the report of a scheduled proposal", async () => {
    const store = await storeWithAudits();
    const folder = await mkdtemp(join(tmpdir(), "audit-report-"));
    const [outcome] = await proposeCalibrations(
      { policies: new PolicyRegistry([policy]), store, objects: new FsObjectStore(folder), now: () => NOW },
      { minLabels: 10 },
    );
    expect(outcome!.status).toBe("proposed");
    if (outcome!.status !== "proposed") throw new Error("no proposal");
    const report = await readFile(join(folder, outcome!.keys.report), "utf8");
    expect(report).toContain("Wrong automatic actions (live audits)");
    expect(report).toMatch(/10\.0% \(95% interval .*40 audit labels, 4 wrong\)/);
  });
});
