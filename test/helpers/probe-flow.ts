/**
 * The registered-certificate flow the certificate-gate probes share (issue 40): version 1 of a
 * moderation policy decided in an in-memory store with each item's hidden truth, a registered
 * sample drawn and labelled by a scripted lead, and `--propose` at the plan's goal.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { CertificateGoal } from "../../shared/domain/calibration/certificate/certificate.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { everyDecision } from "../../shared/domain/decision-store.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { decidedStore, reviewOf } from "./certification-store.ts";
import { type FlowShape, MODERATION } from "./review-flow.ts";

/** The probed policy: one label settles a draw. */
export const PROBE_POLICY = parsePolicy({ ...MODERATION, auditSampleRate: 0.05, certificationReviewers: 1 });
/** 2% at 95%. */
export const PROBE_GOAL: CertificateGoal = { maxError: 0.02, confidence: 0.95 };
/** A model wrong 6% of the time at or above 0.85, whatever it says. */
export const BAD_MODEL: FlowShape = {
  decisions: 3_000,
  trueTemperature: 0.7,
  confidentlyWrong: { above: 0.85, rate: 0.06 },
};
/** A model that earns a 2% certificate. */
export const GOOD_MODEL: FlowShape = { decisions: 3_000, trueTemperature: 0.7 };

/** A store of version 1's decisions, their truth, and the review setting on it. */
export type ProbeSetting = ReturnType<typeof reviewOf> & {
  readonly store: InMemoryDecisionStore;
  readonly truth: Map<string, string>;
};

/** Version 1's decisions of `shape` in a fresh store, and the review setting on it. */
export async function decidedProbe(shape: FlowShape, seed: number): Promise<ProbeSetting> {
  const store = new InMemoryDecisionStore();
  const truth = await decidedStore(store, PROBE_POLICY, shape, seed);
  return { store, truth, ...reviewOf(store, PROBE_POLICY) };
}

/** Every record of the probed policy. */
export async function probeRecords(s: ProbeSetting): Promise<DecisionRecord[]> {
  const all: DecisionRecord[] = [];
  const window = { since: "1970-01-01T00:00:00.000Z", until: "2100-01-01T00:00:00.000Z" };
  const ids = { policyId: PROBE_POLICY.id, policyIds: [PROBE_POLICY.id] };
  for await (const r of everyDecision(s.store, { ...window, ...ids })) all.push(r);
  return all;
}

/** Draws a registered sample of `size` at 0.85 for `goal`; the request and the drawn records. */
export async function drawProbe(s: ProbeSetting, size: number, goal = PROBE_GOAL) {
  const requested = await requestCertification(
    { store: s.store, now: s.now },
    { policy: PROBE_POLICY, size, minProbability: 0.85, order: "first", goal },
  );
  const page = await s.store.pageReviewQueue({ policyIds: [PROBE_POLICY.id], limit: 10_000, countCap: 0 });
  return { requested, drawn: page.records.filter((r) => r.certification) };
}

/** Labels `records` with their truth, as the lead. */
export async function labelTruly(s: ProbeSetting, records: readonly DecisionRecord[]): Promise<void> {
  for (const r of records) await labelItem({ ...r, label: s.truth.get(r.itemId)! }, s.lead, s.review);
}

/** Draws a registered sample and labels every drawn item honestly; the request. */
export async function drawAndLabel(s: ProbeSetting, size: number, goal = PROBE_GOAL) {
  const { requested, drawn } = await drawProbe(s, size, goal);
  await labelTruly(s, drawn);
  return requested;
}

/** `--propose` at `goal`: the proposed version 2. */
export async function proposeProbe(s: ProbeSetting, goal = PROBE_GOAL): Promise<Policy> {
  const folder = await mkdtemp(join(tmpdir(), "probe-gate-"));
  const [outcome] = await proposeCalibrations(
    { policies: s.policies, store: s.store, objects: new FsObjectStore(folder), now: s.now },
    { minLabels: 10, goal: { kind: "max-auto-error", ...goal } },
  );
  if (outcome?.status !== "proposed") throw new Error(`no proposal: ${JSON.stringify(outcome)}`);
  return parsePolicy(JSON.parse(await readFile(join(folder, outcome.keys.policy), "utf8")));
}

/**
 * The same-claim budget probes' story: version 1's plan of 50 drawn and labelled, then `next`
 * (a later version) deciding items of its own and drawing its plan of 50 at 0.85 (or its own
 * higher threshold), with version 1 as the other version. Both plans.
 */
export async function nextVersionPlan(next: Policy, seed = 5) {
  const s = await decidedProbe(GOOD_MODEL, seed);
  const first = await drawAndLabel(s, 50);
  await decidedStore(s.store, next, GOOD_MODEL, seed + 1);
  const again = await requestCertification(
    { store: s.store, now: s.now },
    {
      policy: next,
      size: 50,
      minProbability: 0.85,
      order: "first",
      goal: PROBE_GOAL,
      otherVersions: [PROBE_POLICY],
    },
  );
  return { first, again };
}
