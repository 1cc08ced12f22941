import { describe, expect, it } from "vitest";
import { registrationLines } from "../../cli/calibrate/calibrate-registered.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { CertifiedItem } from "../../shared/domain/calibration/certificate/certificate-units.ts";
import { certifyRegistered } from "../../shared/domain/calibration/certificate/registered-certificate.ts";
import {
  certificationDrawSchema,
  registeredZeroErrors,
  registerPlan,
} from "../../shared/domain/calibration/certificate/registered-plan.ts";
import { fieldText } from "../../shared/domain/calibration/proposal-check.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { verifyCertificate } from "../../shared/use-cases/calibration/certificate-labels.ts";
import {
  PlanRoundMovedError,
  requestCertification,
} from "../../shared/use-cases/calibration/request-certification.ts";
import { decidedStore, reviewOf } from "../helpers/certification-store.ts";
import { labelTruly, proposeProbe } from "../helpers/probe-flow.ts";
import { type FlowShape, MODERATION } from "../helpers/review-flow.ts";

// One label settles a draw here (double review is tested in review-decision-certification.test.ts).
const POLICY = parsePolicy({ ...MODERATION, auditSampleRate: 0.05, certificationReviewers: 1 });
const GOAL = { maxError: 0.02, confidence: 0.95 };
const GOOD: FlowShape = { decisions: 3_000, trueTemperature: 0.7 };

/** A decided store with one registered sample of `size` drawn at 0.85. */
async function drawn(size: number, seed = 1) {
  const store = new InMemoryDecisionStore();
  const truth = await decidedStore(store, POLICY, GOOD, seed);
  const setting = reviewOf(store, POLICY);
  const requested = await requestCertification(
    { store, now: setting.now },
    { policy: POLICY, size, minProbability: 0.85, order: "first", goal: GOAL },
  );
  const page = await store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
  return { store, truth, ...setting, requested, queue: page.records };
}

type Drawn = Awaited<ReturnType<typeof drawn>>;

const sampleOf = (run: Drawn) => run.queue.filter((r) => r.certification);
const othersOf = (run: Drawn) => run.queue.filter((r) => !r.certification);

describe("a registered plan, written with its sample", () => {
  it("rides on every drawn record, valid under the record schema", async () => {
    const run = await drawn(200);
    const sample = sampleOf(run);
    expect(sample.length).toBe(200);
    for (const r of sample) {
      const parsed = certificationDrawSchema.parse(r.certification);
      expect(parsed.plan).toEqual(run.requested.plan);
    }
    expect(run.requested.plan).toMatchObject({ ...GOAL, size: 200, policyVersion: 1, round: 1, level: 0.96 });
    const ts = run.requested.plan!.thresholds;
    expect(ts.at(-1)).toBe(0.85);
    expect(ts.toSorted((a, b) => b - a)).toEqual(ts);
  });

  it("counts only the sample's drawn decisions: escalations and audits labelled beside it never count", async () => {
    const run = await drawn(250);
    await labelTruly(run, [...sampleOf(run), ...othersOf(run)]);
    const v2 = await proposeProbe(run, GOAL);
    const c = v2.certificate!;
    expect(c.method).toBe("pre-registered sample");
    // Apply's line names its kind.
    expect(fieldText("certificate", c)).toMatch(/, 250 labels \(pre-registered sample cert-/);
    expect(c.labels).toBe(250);
    expect(c.kinds?.audit ?? 0).toBe(0);
    expect(c.kinds?.escalation ?? 0).toBe(0);
    expect(c.registered).toMatchObject({ sample: run.requested.frame.sample, n: 250, unlabelled: 0 });
    // Same maps as the version it was drawn from: no refit.
    expect(v2.temperature).toBe(POLICY.temperature);
    expect(await verifyCertificate({ store: run.store, policies: run.policies }, v2)).toEqual({
      verified: true,
      labels: 250,
    });
    // Pointed at another sample, it is not verified: it is recomputed from the one it names.
    const source = { ...c.labelSource!, sample: "cert-other" } as typeof c.labelSource;
    const moved = { ...v2, certificate: { ...c, labelSource: source } };
    const verdict = await verifyCertificate({ store: run.store, policies: run.policies }, moved);
    expect(verdict.verified).toBe(false);
  }, 60_000);

  it("keeps its threshold when labels are gathered after the plan for other reasons", async () => {
    const run = await drawn(250, 2);
    await labelTruly(run, sampleOf(run));
    const first = (await proposeProbe(run, GOAL)).certificate!;
    expect(first.threshold).not.toBeNull();
    await labelTruly(run, othersOf(run));
    const later = (await proposeProbe(run, GOAL)).certificate!;
    expect(later.registered?.sample).toBe(first.registered?.sample);
    expect([later.threshold, later.automated, later.errors]).toEqual([
      first.threshold,
      first.automated,
      first.errors,
    ]);
  }, 60_000);

  it("counts a drawn decision left unlabelled as wrong, and the recheck sees it so", async () => {
    const run = await drawn(160, 3);
    const sample = sampleOf(run);
    await labelTruly(run, sample.slice(1));
    const v2 = await proposeProbe(run, GOAL);
    expect(v2.certificate?.registered?.unlabelled).toBe(1);
    // 160 drawn at 96% needs every one right: one left out loses the claim.
    expect(v2.certificate?.threshold ?? null).toBeNull();
  }, 60_000);

  it("tests the version's second plan at half of what the first left of the budget", async () => {
    const run = await drawn(50, 4);
    const second = await requestCertification(
      { store: run.store, now: run.now },
      { policy: POLICY, size: 50, minProbability: 0.85, order: "first", goal: GOAL },
    );
    expect(run.requested.plan?.level).toBe(0.96);
    expect(second.plan).toMatchObject({ round: 2, level: 0.995 });
    // A plan chosen as round 2 while another took round 2 first draws nothing: it would share its α.
    const before = await run.store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
    const raced = requestCertification(
      { store: run.store, now: run.now },
      { policy: POLICY, size: 50, minProbability: 0.85, order: "first", goal: GOAL, round: 2 },
    );
    await expect(raced).rejects.toThrow(PlanRoundMovedError);
    await expect(raced).rejects.toThrow(/planned as plan 2 and would be plan 3; plan again/);
    const after = await run.store.pageReviewQueue({ policyIds: [POLICY.id], limit: 10_000, countCap: 0 });
    expect(after.records.length).toBe(before.records.length);
    expect(registeredZeroErrors(GOAL, 1)).toBe(160);
    expect(registeredZeroErrors(GOAL, 2)).toBe(263);
    // What --plan prints before a second request, while the first sample still waits.
    const lines = registrationLines({ round: 2, level: 0.995, waiting: 3 }, GOAL.confidence);
    expect(lines[0]).toMatch(/^ {2}plan 1's sample still has 3 drawn decisions waiting for a label/);
    expect(lines[1]).toMatch(
      /registers plan 2 of this version, tested at 99\.5% confidence \(10% of the 5% error budget/,
    );
  });
});

describe("the registered certificate on its own", () => {
  const plan = registerPlan(GOAL, 0.85, 160, 1, 1);
  const right = (i: number): CertifiedItem => ({
    confidence: 0.9 + (i % 10) / 1000,
    wrong: false,
    automatable: true,
    key: `d${i}`,
  });

  it("certifies the plan's lowest threshold on 160 drawn decisions all right, at 96%", () => {
    const result = certifyRegistered(
      plan,
      "s",
      Array.from({ length: 160 }, (_, i) => right(i)),
    );
    expect(result.threshold).toBe(0.85);
    expect(result.bound!).toBeLessThanOrEqual(0.02);
    expect(result.registered).toMatchObject({ n: 160, unlabelled: 0, level: 0.96 });
  });

  it("counts one unlabelled draw, and one drawn decision not found, as wrong", () => {
    const items = Array.from({ length: 160 }, (_, i) => right(i));
    const unlabelled = items.map((x, i) => (i === 0 ? { ...x, wrong: true, unlabelled: true } : x));
    expect(certifyRegistered(plan, "s", unlabelled).threshold).toBeNull();
    const absent = certifyRegistered(plan, "s", items.slice(1));
    expect(absent.threshold).toBeNull();
    expect(absent.registered.unlabelled).toBe(1);
  });
});
