/**
 * Issue 40, finding 5: a drawn certification item left unlabelled must count against the claim.
 * A team that labels only the drawn items it agrees with, on a model wrong 8% of the time among
 * what it would automate, used to get a 2% certificate "verified" on its labels (the unlabelled
 * draws simply vanished). Each drawn item not labelled by the certificate's time now counts as
 * wrong wherever its threshold automates it, when it is made and when the decide path recomputes it.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { verifyCertificate } from "../../shared/use-cases/calibration/certificate-labels.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";
import { decidedStore, reviewOf } from "../helpers/certification-store.ts";
import { type FlowShape, MODERATION, trueRate } from "../helpers/review-flow.ts";

// One label settles a draw here; double review of certification samples (the default) is
// tested in review-decision-certification.test.ts.
const POLICY = parsePolicy({ ...MODERATION, auditSampleRate: 0.05, certificationReviewers: 1 });
const GOAL = { maxError: 0.02, confidence: 0.95 };
const WRONG_8: FlowShape = {
  decisions: 3_000,
  trueTemperature: 1,
  confidentlyWrong: { above: 0.85, rate: 0.08 },
};
const GOOD: FlowShape = { decisions: 3_000, trueTemperature: 0.7 };

/** Draws `size` at the policy's threshold; labels the drawn items `keep` accepts; proposes at 2%. */
async function flow(
  shape: FlowShape,
  seed: number,
  size: number,
  keep: (agrees: boolean, r: DecisionRecord, drawn: readonly DecisionRecord[]) => boolean,
  labelAudits = false,
) {
  const store = new InMemoryDecisionStore();
  const truth = await decidedStore(store, POLICY, shape, seed);
  const { now, policies, review, lead } = reviewOf(store, POLICY);
  await requestCertification({ store, now }, { policy: POLICY, size, minProbability: 0.85, order: "first" });
  const page = await store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
  const drawn = page.records.filter((r) => r.certification && r.status === "pending_review");
  const left = [];
  for (const r of drawn) {
    if (keep(truth.get(r.itemId) === r.chosen, r, drawn))
      await labelItem({ ...r, label: truth.get(r.itemId)! }, lead, review);
    else left.push(r);
  }
  // The audit samples, labelled honestly where asked: one left waiting counts as wrong too.
  for (const r of page.records.filter((r) => labelAudits && r.reason === "audit_sample"))
    await labelItem({ ...r, label: truth.get(r.itemId)! }, lead, review);
  const folder = await mkdtemp(join(tmpdir(), "unlabelled-"));
  const [outcome] = await proposeCalibrations(
    { policies, store, objects: new FsObjectStore(folder), now },
    { minLabels: 10, goal: { kind: "max-auto-error", ...GOAL } },
  );
  if (outcome?.status !== "proposed") throw new Error(`no proposal: ${JSON.stringify(outcome)}`);
  const proposed = JSON.parse(await readFile(join(folder, outcome.keys.policy), "utf8"));
  return { store, truth, now, policies, review, lead, left, drawn, outcome, proposed: parsePolicy(proposed) };
}

describe("drawn certification items left unlabelled", () => {
  it("give no certificate to a team that labels only the draws it agrees with (model wrong 8%)", async () => {
    expect(trueRate(WRONG_8, { temperature: 1 }, 0.85)!).toBeGreaterThan(0.07);
    for (const seed of [1, 2, 3]) {
      const run = await flow(WRONG_8, seed, 200, (agrees) => agrees);
      expect(run.left.length, `seed ${seed}`).toBeGreaterThan(5);
      expect(run.proposed.certificate?.threshold ?? null, `seed ${seed}`).toBeNull();
      const notes = run.outcome.status === "proposed" ? run.outcome.summary?.threshold.notes.join("\n") : "";
      // The sample carries a registered plan: its certificate counts each left-out draw as wrong.
      expect(notes).toMatch(/drawn decisions not labelled \(or not settled\) count as wrong/);
    }
  }, 120_000);

  it("make the decide path's check refuse a certificate that left them out", async () => {
    const run = await flow(WRONG_8, 1, 200, (agrees) => agrees);
    // The certificate as it was made before: on the labels alone, the unlabelled draws dropped.
    const until = run.now().toISOString();
    const { rows, floor } = await reviewedLabels(run.store, POLICY, undefined, until);
    const source = { kind: "table" as const, policyVersion: 1, since: null, until };
    const summary = calibratePolicy(POLICY, rows, {
      goal: { kind: "max-auto-error", ...GOAL },
      now: new Date(until),
      labelSource: source,
      thresholdFloor: floor,
    });
    const selective = summary.proposedPolicy;
    expect(selective.certificate?.threshold).not.toBeNull();
    const verdict = await verifyCertificate({ store: run.store, policies: run.policies }, selective);
    expect(verdict.verified).toBe(false);
  }, 60_000);

  it("are counted as of the certificate's time, so labelling them later does not change its check", async () => {
    // The least confident draw left unlabelled: it counts as wrong only at the widest thresholds.
    const lowest = (drawn: readonly DecisionRecord[]) =>
      drawn.reduce((a, b) => (b.topProbability! < a.topProbability! ? b : a));
    const run = await flow(GOOD, 1, 320, (_, r, drawn) => r !== lowest(drawn), true);
    expect(run.left).toHaveLength(1);
    expect(run.proposed.certificate?.threshold).not.toBeNull();
    const before = await verifyCertificate({ store: run.store, policies: run.policies }, run.proposed);
    expect(before).toMatchObject({ verified: true });
    const r = run.left[0]!;
    await labelItem({ ...r, label: run.truth.get(r.itemId)! }, run.lead, run.review);
    const after = await verifyCertificate({ store: run.store, policies: run.policies }, run.proposed);
    expect(after).toMatchObject({ verified: true });
  }, 60_000);
});
