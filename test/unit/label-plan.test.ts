/**
 * The label plan and the certification sample (issue 33, items 1 and 2): `--plan` on a labelled
 * file says, before any labelling, that 149 labels of automated decisions are needed at 2% with 95%
 * confidence and no error, and how many the file holds; labels held count for what they are worth
 * (audit samples drawn at 2% are worth few evenly drawn ones); `--request` draws an even sample of
 * the version's automatable decisions at or above the threshold, puts the automated ones into the
 * review queue first without undoing their action, marks the ones already waiting, and the review
 * page says "certification sample".
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { badges, reasonText } from "../../shared/pages/review-views.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const POLICY = parsePolicy({ ...TEAMS_POLICY, auditSampleRate: 0.02 });
const GOAL = { maxError: 0.02, confidence: 0.95 };

describe("decide calibrate --plan", () => {
  it("says how many labels of automated decisions a 2% certificate needs, and how many a file holds", async () => {
    const run = await runDecide([
      "calibrate",
      "--plan",
      "--policy",
      "ticket-routing",
      "--max-auto-error",
      "0.02",
      "--input",
      "events/calibration/ticket-routing.labelled.jsonl",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^ {2}149 with no error at all \(the fewest whose exact bound is under 2\.0%\)$/m,
    );
    expect(run.stdout).toMatch(
      /^ {2}held in events\/calibration\/ticket-routing\.labelled\.jsonl: 1,000 labels; \d+ of decisions it would automate at or above 0\.\d+, worth about \d+ evenly drawn labels$/m,
    );
    const refused = await runDecide([
      "calibrate",
      "--plan",
      "--policy",
      "ticket-routing",
      "--input",
      "x.jsonl",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--plan needs --max-auto-error/);
  }, 60_000);

  it("counts labels held for what they are worth: audit samples drawn at 2% stand for 50 decisions each", () => {
    const row = (kind: LabelledLogits["kind"], inclusionProbability: number, i: number): LabelledLogits => ({
      logits: [9, 0],
      label: 0,
      group: `g${i}`,
      kind,
      inclusionProbability,
    });
    const even = Array.from({ length: 100 }, (_, i) => row("certification", 0.1, i));
    const plan = planLabels(POLICY, even, GOAL);
    expect(plan).toMatchObject({ zeroErrors: 149, needed: 149, remaining: 49 });
    expect(plan.held).toMatchObject({ automatable: 100, worth: 100 });
    // The same 100 plus 20 audit samples at 2%: they dominate the weight, and are worth far fewer.
    const mixed = [...even, ...Array.from({ length: 20 }, (_, i) => row("audit", 0.02, 100 + i))];
    const weighted = planLabels(POLICY, mixed, GOAL);
    expect(weighted.held.kinds).toMatchObject({ certification: 100, audit: 20 });
    expect(weighted.held.worth).toBeLessThan(100);
  });
});

/** `count` decisions of POLICY: confident ones automated (actioned), every tenth an escalation waiting. */
async function decisions(store: InMemoryDecisionStore, count: number): Promise<DecisionRecord[]> {
  const out: DecisionRecord[] = [];
  for (let i = 0; i < count; i++) {
    const escalated = i % 10 === 0;
    const at = new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString();
    const record: DecisionRecord = {
      itemId: `D-${i}`,
      policyId: POLICY.id,
      policyVersion: 1,
      status: escalated ? "pending_review" : "actioned",
      route: escalated ? "human" : "auto",
      reason: escalated ? "below_threshold" : "confident",
      chosen: "billing",
      topProbability: escalated ? 0.7 : 0.85 + (0.15 * i) / count,
      ...(escalated ? {} : { action: "tickets:billing", auditBand: "all", auditInclusionProbability: 0.02 }),
      createdAt: at,
      updatedAt: at,
      eventPublished: true,
    };
    await store.create(record);
    out.push(record);
  }
  return out;
}

describe("requestCertification", () => {
  it("draws evenly from the automated decisions above the threshold and queues them first, actions kept", async () => {
    const store = new InMemoryDecisionStore();
    await decisions(store, 400);
    const now = () => new Date("2026-12-01T00:00:00.000Z");
    const result = await requestCertification(
      { store, now },
      { policy: POLICY, size: 36, minProbability: 0.9, order: "first" },
    );
    // 400 decisions, 360 automated, of which those at or above 0.9: every one had the same chance.
    expect(result.queued).toBe(36);
    expect(result.frame.rates).toEqual([36 / result.population]);
    const page = await store.pageReviewQueue({ policyIds: [POLICY.id], limit: 100, countCap: 100 });
    const drawn = page.records.filter((r) => r.certification);
    expect(drawn).toHaveLength(36);
    // First in the queue: before the escalation that waited longest.
    expect(page.records.slice(0, 36).every((r) => r.certification)).toBe(true);
    for (const r of drawn) {
      expect(r.topProbability!).toBeGreaterThanOrEqual(0.9);
      expect(r).toMatchObject({ status: "pending_review", route: "auto", action: "tickets:billing" });
    }
    // Spread over the confidence range, not bunched.
    const p = drawn.map((r) => r.topProbability!).sort();
    expect(p[0]!).toBeLessThan(0.92);
    expect(p.at(-1)!).toBeGreaterThan(0.98);
    // The review page says what it is, to the lead only (reviewers label it like any other item).
    const lead = { id: "l", name: "L", groups: ["admins"] };
    expect(badges(drawn[0]!, { id: "r", name: "R", groups: ["reviewers"] }, 0)).not.toContain(
      "certification",
    );
    expect(badges(drawn[0]!, lead, 0)).toContain("certification sample");
    expect(reasonText(drawn[0]!, POLICY, lead)).toMatch(
      /^Certification sample: drawn at random \(chance \d+%\) to check automatic actions; .* \(already applied; your label does not undo it\)$/,
    );
  });
});
