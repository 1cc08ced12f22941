/**
 * Registered plans read from the decisions table: the samples a version's `--plan --request N`
 * drew, each with the plan written on its records (`registered-plan.ts`). `decide calibrate
 * --propose` certifies the latest one (`registered-proposal.ts`); apply, `decide status` and the
 * decide path recompute a registered certificate from its sample's records
 * ({@link registeredCertificateProblem}), never from other labels.
 */

import type { CertificateGoal } from "../../domain/calibration/certificate/certificate.ts";
import { alphaShare, registeredLevel } from "../../domain/calibration/certificate/registered-plan.ts";
import { certifiedAt, registeredProposal } from "../../domain/calibration/certificate/registered-proposal.ts";
import {
  certifySample,
  type PlanSample,
  planSamples,
  sampleLabelsSha256,
} from "../../domain/calibration/certificate/registered-sample.ts";
import { mapOf } from "../../domain/calibration/map.ts";
import {
  decisionRulesSha256,
  policyTextSha256,
  scoredByOf,
  scoredByProblem,
} from "../../domain/calibration/provenance.ts";
import { tierCount, tierPolicy, tiersOf } from "../../domain/cascade.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import { type DecisionStore, everyDecision } from "../../domain/decision-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";

/** The registered plans of `policy`'s version, oldest first, with the records each drew. */
async function registeredSamples(store: DecisionStore, policy: Policy, until: string): Promise<PlanSample[]> {
  const drawn: DecisionRecord[] = [];
  const window = { since: "1970-01-01T00:00:00.000Z", until, policyId: policy.id, policyIds: [policy.id] };
  for await (const r of everyDecision(store, window))
    if (r.policyVersion === policy.version && r.certification?.plan) drawn.push(r);
  return planSamples(drawn, policy.version);
}

/** The proposal of the latest registered plan of `policy`'s version, or undefined when it has none. */
export async function latestRegisteredProposal(store: DecisionStore, policy: Policy, now: Date) {
  const samples = await registeredSamples(store, policy, now.toISOString());
  const latest = samples.at(-1);
  return latest ? { sample: latest, ...registeredProposal(policy, latest, now) } : undefined;
}

/**
 * Why `--propose` at `goal` cannot use the latest registered plan of `policy`'s version (it was
 * drawn for another target: its certificate tests only the goal written on its records), in one
 * line naming both targets and what to do; undefined when the goals match or the version has no
 * registered plan.
 */
export async function registeredGoalProblem(
  store: DecisionStore,
  policy: Policy,
  goal: CertificateGoal,
  now: Date,
): Promise<string | undefined> {
  const latest = (await registeredSamples(store, policy, now.toISOString())).at(-1);
  if (!latest) return undefined;
  const { plan } = latest;
  if (plan.maxError === goal.maxError && plan.confidence === goal.confidence) return undefined;
  const pct = (x: number) => `${Number((x * 100).toFixed(2))}%`;
  const target = (g: CertificateGoal) => `≤ ${pct(g.maxError)} wrong at ${pct(g.confidence)} confidence`;
  const next = plan.round + 1;
  return `${policy.id}@${policy.version}'s registered plan ${plan.round} (sample ${latest.sample}) was drawn for ${target(plan)}, not ${target(goal)}, and its certificate tests only that target: propose at the plan's target (--max-auto-error ${plan.maxError} --confidence ${plan.confidence}), or draw plan ${next} at the new one (npx decide calibrate --plan --policy ${policy.id} --max-auto-error ${goal.maxError} --confidence ${goal.confidence} --request N), tested at ${pct(registeredLevel(goal.confidence, next))} confidence (${pct(alphaShare(next))} of the error budget)`;
}

/**
 * Why `certified`'s registered certificate is not the one its sample's records give (recomputed
 * under `labelled`, the version the sample drew from, on the labels settled by the time it was
 * made), or undefined when it is.
 */
export async function registeredCertificateProblem(
  store: DecisionStore,
  labelled: Policy,
  certified: Policy,
): Promise<string | undefined> {
  const c = certified.certificate;
  const source = c?.labelSource;
  if (!c || source?.kind !== "sample") return "it names no registered sample";
  const moved = decidesOtherwise(labelled, certified);
  if (moved) return moved;
  const samples = await registeredSamples(store, labelled, source.until);
  const s = samples.find((x) => x.sample === source.sample);
  if (!s) return `its sample ${source.sample} is not among the records of ${labelled.id}@${labelled.version}`;
  // The claim is the plan's, written on the records before labelling: never one edited in later.
  const { plan } = s;
  if (plan.rulesSha256 !== undefined && plan.rulesSha256 !== decisionRulesSha256(labelled, tiersOf(labelled)))
    return `${labelled.id}@${labelled.version}'s file no longer decides as it did when its sample ${source.sample} was drawn (its text, a model, map, threshold or floor was edited since)`;
  const otherModel = s.records
    .map((r) => scoredByOf(r))
    .map((by) => (by ? scoredByProblem(c, by) : undefined))
    .find((problem) => problem !== undefined);
  if (otherModel)
    return `${otherModel}: it names another model or prompt layout than the one that decided its sample`;
  if (c.maxError !== plan.maxError || c.confidence !== plan.confidence || c.registered?.round !== plan.round)
    return `it claims ≤ ${c.maxError} wrong at ${c.confidence} confidence (plan ${c.registered?.round ?? "none"}), and its sample ${source.sample} was drawn for ≤ ${plan.maxError} at ${plan.confidence} (plan ${plan.round})`;
  if (sampleLabelsSha256(s, labelled, source.until) !== c.labelsSha256)
    return `the records of its sample ${source.sample} are not the set it names: labels were changed since, or it was not made on them`;
  const again = certifySample(s, labelled, source.until);
  const threshold = again.threshold === null ? null : certifiedAt(again.threshold, labelled.autoThreshold);
  const same =
    threshold === c.threshold &&
    again.labels === c.labels &&
    again.automated === c.automated &&
    again.errors === c.errors &&
    again.registered.level === c.registered?.level;
  if (same) return threshold === null ? undefined : laterTierProblem(labelled, certified, threshold);
  const said = (t: number | null, automated: number, errors: number) =>
    t === null ? "no threshold" : `threshold ${t} (${errors} wrong of ${automated} drawn)`;
  return `recomputed on its sample ${source.sample} it certifies ${said(threshold, again.automated, again.errors)}, not ${said(c.threshold, c.automated, c.errors)}`;
}

/**
 * Why `certified` would not decide its sample as `labelled` did, where the registered plan tested
 * it: another question, options or layout, or another calibration map for any model (a registered
 * plan never refits; its proposal keeps the maps and only raises thresholds). Undefined when it
 * decides them the same. Without it, a certificate copied onto a sharper map would verify.
 */
function decidesOtherwise(labelled: Policy, certified: Policy): string | undefined {
  if (policyTextSha256(certified) !== policyTextSha256(labelled))
    return `its question, options or layout are not those of ${labelled.id}@${labelled.version}, whose decisions its sample drew`;
  const tiers = Math.max(tierCount(labelled), tierCount(certified));
  for (let i = 0; i < tiers; i++) {
    const [was, is] = [labelled, certified].map((p) =>
      i < tierCount(p)
        ? JSON.stringify({ ...mapOf(tierPolicy(p, i)), model: tierPolicy(p, i).model })
        : "none",
    );
    if (was !== is)
      return `its ${i === 0 ? "first model's" : `model ${i + 1}'s`} calibration is not that of ${labelled.id}@${labelled.version}, under which its sample was tested`;
    // A lower off-options floor automates answers the sample's frame sent to people.
    const floor = (p: Policy) => (i < tierCount(p) ? (tierPolicy(p, i).minAllowedTokenMass ?? 0) : 0);
    if (floor(certified) < floor(labelled))
      return `its ${i === 0 ? "first model's" : `model ${i + 1}'s`} minAllowedTokenMass ${floor(certified)} is below ${floor(labelled)}, that of ${labelled.id}@${labelled.version}, under which its sample was drawn`;
  }
  return undefined;
}

/**
 * Why a later model of `certified` acts below what the registered proposal sets, max(t, its own
 * threshold in `labelled`): the certificate's own tier entries can be edited with it, so they are
 * not what it is held to.
 */
function laterTierProblem(labelled: Policy, certified: Policy, threshold: number): string | undefined {
  for (let i = 1; i < tierCount(certified); i++) {
    const floor = Math.max(threshold, i < tierCount(labelled) ? tierPolicy(labelled, i).autoThreshold : 1);
    const acts = tierPolicy(certified, i).autoThreshold;
    if (acts < floor)
      return `model ${i + 1} acts at ${acts}, below ${floor}, the least its certificate at ${threshold} allows it`;
  }
  return undefined;
}
