/**
 * A scripted moderation lead closes the loop with the product's own steps (issue 33, "Done
 * when"): on a version that automates at 0.85 and audits 5% of its automatic decisions, with a
 * model whose true error among the decisions it would automate is under 0.5%, the lead plans
 * (`planLabels`), asks for the certification sample the plan names (`requestCertification`),
 * labels exactly those items (and the audit samples waiting: an audit sample left unlabelled counts
 * against the claim) through the review use case, and proposes with a 2% target
 * (`proposeCalibrations`), repeating while the plan asks for more. On every seed a 2% certificate
 * is reached with fewer than 400 labels in all; the certified threshold's true rate, measured on
 * fresh decisions, is under 2%. Each request registers a plan (issue 40): the version's first is
 * tested at 96%, so it asks 160 labels where the plan at the full 95% asked 149.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { planLabels } from "../../shared/domain/calibration/certificate/label-plan.ts";
import { registeredLevel } from "../../shared/domain/calibration/certificate/registered-plan.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { reviewedLabels } from "../../shared/use-cases/review/reviewed-labels.ts";
import { decidedStore, reviewOf } from "../helpers/certification-store.ts";
import { type FlowShape, MODERATION, trueRate } from "../helpers/review-flow.ts";

// One label settles a draw here; double review of certification samples (the default) is
// tested in review-decision-certification.test.ts.
const POLICY = parsePolicy({ ...MODERATION, auditSampleRate: 0.05, certificationReviewers: 1 });
const SHAPE: FlowShape = { decisions: 3_000, trueTemperature: 0.7 };
const GOAL = { maxError: 0.02, confidence: 0.95 };
describe("a scripted lead: plan, request, label, propose", () => {
  it("reaches a 2% certificate with fewer than 400 labels when the true error is under 0.5%", async () => {
    expect(trueRate(SHAPE, { temperature: 1 }, 0.85)!).toBeLessThan(0.005);
    const used: number[] = [];
    // Seeds 5 and 6 need a second request (a wrong label in the first sample raised the threshold).
    for (const seed of [1, 5, 6]) {
      const store = new InMemoryDecisionStore();
      const truth = await decidedStore(store, POLICY, SHAPE, seed);
      const { now, policies, review, lead } = reviewOf(store, POLICY);
      let labels = 0;
      let certificate: unknown;
      for (let round = 0; round < 4 && !certificate; round++) {
        const { rows, frames } = await reviewedLabels(store, POLICY);
        // As `--plan` does: each request registers a plan, tested at its share of the budget
        // (the version's first at 96%: 160 labels with no error), on its own sample alone.
        const round = 1 + frames.filter((f) => f.plan).length;
        const level = registeredLevel(GOAL.confidence, round);
        const plan = planLabels(POLICY, rows, { ...GOAL, confidence: level });
        if (plan.needed === null) break;
        if (plan.needed > 0) {
          await requestCertification(
            { store, now },
            { policy: POLICY, size: plan.needed, minProbability: plan.threshold, order: "first", goal: GOAL },
          );
          // The lead labels the certification sample, as the review page offers it.
          const page = await store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
          for (const r of page.records.filter((x) => x.certification && x.status === "pending_review")) {
            await labelItem({ ...r, label: truth.get(r.itemId)! }, lead, review);
            labels++;
          }
          // And the audit samples the queue holds: one left waiting counts against the claim.
          for (const r of page.records.filter((x) => x.reason === "audit_sample" && !x.certification))
            await labelItem({ ...r, label: truth.get(r.itemId)! }, lead, review);
        }
        const folder = await mkdtemp(join(tmpdir(), "lead-"));
        const [outcome] = await proposeCalibrations(
          { policies, store, objects: new FsObjectStore(folder), now },
          { minLabels: 10, goal: { kind: "max-auto-error", ...GOAL } },
        );
        if (outcome?.status !== "proposed") continue;
        const proposed = JSON.parse(await readFile(join(folder, outcome.keys.policy), "utf8"));
        if (proposed.certificate?.threshold !== null && proposed.certificate !== undefined) {
          certificate = proposed.certificate;
          const map = {
            temperature: proposed.temperature,
            prior: proposed.prior,
            optionBias: proposed.optionBias,
          };
          expect(trueRate(SHAPE, map, proposed.certificate.threshold)!).toBeLessThanOrEqual(0.02);
        }
      }
      expect(certificate, `seed ${seed}: no certificate after ${labels} labels`).toBeDefined();
      used.push(labels);
    }
    for (const n of used) expect(n).toBeLessThan(400);
  }, 300_000);
});
