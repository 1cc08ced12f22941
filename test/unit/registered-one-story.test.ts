/**
 * Issue 40, "one story" for the pre-registered certificate: the plan prints the threshold its
 * sample is drawn at (the policy's own 0.85, not the grid point 0.8486 under it) and says why
 * where it aims above it; the "certificate verified" lines of apply and `decide status` name the
 * certificate's kind; the line after `--plan --request` says what a later model's answers are
 * for under a registered plan; and `--propose` at another target than the plan's is refused.
 * Each failed on the code before its fix.
 */
import { describe, expect, it } from "vitest";
import { type Planned, printPlan } from "../../cli/calibrate/calibrate-plan.ts";
import { testedGoal } from "../../cli/calibrate/calibrate-registered.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import { verifiedText } from "../../shared/domain/calibration/certificate/registered-kind.ts";
import { registerPlan } from "../../shared/domain/calibration/certificate/registered-plan.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import {
  latestRegisteredProposal,
  registeredGoalProblem,
} from "../../shared/use-cases/calibration/registered-certification.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { decidedStore, reviewOf } from "../helpers/certification-store.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const POLICY = parsePolicy({ ...MODERATION, auditSampleRate: 0.05, certificationReviewers: 1 });
const GOAL = { maxError: 0.02, confidence: 0.95 };

/** What `--plan` prints for `plan` of POLICY, as a first registered plan. */
function printed(plan: Planned["plan"]): string {
  const planned: Planned = {
    policy: POLICY,
    plan,
    where: "the table t",
    supply: { perDay: 0, auditPerDay: 0, capped: false },
    registration: { round: 1, level: 0.96 },
    options: {
      policyId: POLICY.id,
      policiesDir: "policies",
      goal: GOAL,
      table: "t",
      input: undefined,
      request: undefined,
      order: "first",
      aws: {},
    },
  };
  return printPlan(planned).lines.join("\n");
}

describe("the plan's threshold is the one its sample is drawn at", () => {
  it("aims at the policy's own threshold, not the grid point under it", () => {
    expect(POLICY.autoThreshold).toBe(0.85);
    const frame = [0.8486, 0.849, 0.85, 0.9, 0.99];
    const plan = planLabels(POLICY, [], testedGoal(GOAL, 1), frame);
    expect(plan.threshold).toBe(0.85);
    // Counted at 0.85: the two decisions between 0.8486 and 0.85 are not in the frame.
    expect(plan.frame?.decisions).toBe(3);
    const text = printed(plan);
    expect(text).not.toMatch(/0\.8486/);
    expect(text).toMatch(/at or above 0\.85,/);
    expect(text).not.toMatch(/above the policy's own/);
  });

  it("ends the registered sequence at the frame's minimum itself, grid points only above it", () => {
    const ts = registerPlan(GOAL, 0.85, 160, 1, 1).thresholds;
    expect(ts.at(-1)).toBe(0.85);
    expect(ts.slice(0, -1).every((t) => t > 0.85)).toBe(true);
  });

  it("says why, in one phrase, where it aims above the policy's threshold", () => {
    const plan = { ...planLabels(POLICY, [], testedGoal(GOAL, 1)), threshold: 0.9968 };
    expect(printed(plan)).toMatch(
      /^ {2}it aims at 0\.9968, above the policy's own 0\.85: of the thresholds within reach, the labels held leave the fewest labels to get there; a sample is drawn at or above it$/m,
    );
  });
});

describe("the certificate verified line names its kind", () => {
  it("a registered one names its sample; a learn-then-test one says it is not pre-registered", () => {
    expect(verifiedText({ registered: { sample: "cert-1" } }, 160, "the table")).toBe(
      "certificate verified (pre-registered sample cert-1): recomputed on its 160 labels in the table",
    );
    expect(verifiedText({}, 600, "labels.jsonl")).toBe(
      "certificate verified (learn-then-test on the labels held, not pre-registered): recomputed on its 600 labels in labels.jsonl",
    );
  });
});

describe("--propose at another target than the registered plan's", () => {
  it("is refused in one line naming both targets and what to do", async () => {
    const store = new InMemoryDecisionStore();
    await decidedStore(store, POLICY, { decisions: 600, trueTemperature: 0.7 }, 1);
    const { now } = reviewOf(store, POLICY);
    const before = await registeredGoalProblem(store, POLICY, { maxError: 0.05, confidence: 0.95 }, now());
    expect(before).toBeUndefined();
    const requested = await requestCertification(
      { store, now },
      { policy: POLICY, size: 20, minProbability: 0.85, order: "first", goal: GOAL },
    );
    expect(await registeredGoalProblem(store, POLICY, GOAL, now())).toBeUndefined();
    const problem = await registeredGoalProblem(store, POLICY, { maxError: 0.05, confidence: 0.95 }, now());
    expect(problem).toBe(
      `${POLICY.id}@1's registered plan 1 (sample ${requested.frame.sample}) was drawn for ≤ 2% wrong at 95% confidence, not ≤ 5% wrong at 95% confidence, and its certificate tests only that target: propose at the plan's target (--max-auto-error 0.02 --confidence 0.95), or draw plan 2 at the new one (npx decide calibrate --plan --policy ${POLICY.id} --max-auto-error 0.05 --confidence 0.95 --request N), tested at 99.5% confidence (10% of the error budget)`,
    );
  });
});

describe("a certified threshold above the policy's own", () => {
  it("says why in one phrase beside the certificate", async () => {
    const store = new InMemoryDecisionStore();
    const truth = await decidedStore(store, POLICY, { decisions: 3_000, trueTemperature: 0.7 }, 2);
    const { now, lead, review } = reviewOf(store, POLICY);
    await requestCertification(
      { store, now },
      { policy: POLICY, size: 400, minProbability: 0.85, order: "first", goal: GOAL },
    );
    const page = await store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
    // Wrong labels below 0.9 only: the sequence stops above them.
    for (const r of page.records.filter((x) => x.certification)) {
      const other = POLICY.options.find((o) => o.id !== r.chosen)!.id;
      const label = (r.topProbability ?? 0) < 0.9 ? other : truth.get(r.itemId)!;
      await labelItem({ ...r, label }, lead, review);
    }
    const proposal = (await latestRegisteredProposal(store, POLICY, now()))!;
    const t = proposal.policy.autoThreshold;
    expect(t).toBeGreaterThan(0.85);
    expect(proposal.notes).toContain(
      `certified at ${t}, above ${POLICY.id}@1's own 0.85: the plan's fixed sequence, tested strictest first, stopped at the first threshold whose bound was over the target, so ${t} is the lowest that passed`,
    );
  }, 60_000);
});
