/**
 * The proposal a registered plan makes once its sample is labelled: the next version with the
 * same calibration maps as the version the sample was drawn from (the plan was tested on them: no
 * refit is tried), the certified threshold, and a certificate of method "pre-registered sample"
 * that names its sample, so that apply and the decide path recompute it from the sample's records.
 * The claim is over decisions whose acting model's calibrated top probability is at least the
 * certified t; for a cascade, certifying t sets every tier's threshold to max(t, its own).
 */
import { type PolicyCertificate, REGISTERED_METHOD } from "../../policy/certificate-schema.ts";
import type { Policy } from "../../policy/policy.ts";
import type { CalibrationSummary } from "../calibrate.ts";
import { calibrationSha256, policyTextSha256 } from "../provenance.ts";
import { type RegisteredResult, registeredSentence } from "./certificate.ts";
import { certifySample, type PlanSample, sampleLabelsSha256 } from "./registered-sample.ts";

/** What the registered proposal gives: the next version, the result and its lines. */
interface RegisteredProposal {
  readonly policy: Policy;
  readonly result: RegisteredResult;
  readonly notes: readonly string[];
}

/** The one value `values` hold where every row names it, else null (a certificate names it or none). */
function single(values: readonly (string | undefined)[]): string | null {
  const set = new Set(values);
  return set.size === 1 && !set.has(undefined) ? values[0]! : null;
}

/** Tier `index`'s model file and prompt layout over the drawn records that hold its answer. */
function tierProvenance(s: PlanSample, index: number) {
  const answers = s.records.flatMap((r) => {
    const a = r.tiers ? r.tiers[index] : index === 0 ? r : undefined;
    return a ? [a] : [];
  });
  return {
    modelSha256: single(answers.map((a) => a.modelSha256)),
    promptVersion: single(answers.map((a) => a.promptVersion)),
  };
}

/** The threshold a model at `own` takes: max(t, its own); 1 (nothing automated) where none is certified. */
export const certifiedAt = (t: number | null, own: number) => (t === null ? 1 : Math.max(t, own));

/**
 * The next version of `policy` (the version the plan's sample was drawn from) certified by the
 * plan's sample on the labels settled by `now`.
 */
export function registeredProposal(policy: Policy, s: PlanSample, now: Date): RegisteredProposal {
  const until = now.toISOString();
  const result = certifySample(s, policy, until);
  const t = result.threshold;
  const { certificate: _old, ...kept } = policy;
  const next: Policy = {
    ...kept,
    version: policy.version + 1,
    autoThreshold: certifiedAt(t, policy.autoThreshold),
    ...(policy.cascade
      ? {
          cascade: policy.cascade.map((tier) => ({
            ...tier,
            autoThreshold: certifiedAt(t, tier.autoThreshold),
          })),
        }
      : {}),
    calibratedAt: until,
  };
  const first = tierProvenance(s, 0);
  const certificate: PolicyCertificate = {
    maxError: result.maxError,
    confidence: result.confidence,
    method: REGISTERED_METHOD,
    registered: {
      sample: s.sample,
      n: result.registered.n,
      unlabelled: result.registered.unlabelled,
      round: result.registered.round,
      level: result.registered.level,
    },
    threshold: t === null ? null : next.autoThreshold,
    bound: result.bound === null ? null : Number(result.bound.toPrecision(4)),
    ...(result.evidence && t !== null ? { evidence: result.evidence } : {}),
    ...(result.kinds ? { kinds: result.kinds } : {}),
    automated: result.automated,
    errors: result.errors,
    labels: Math.max(1, result.labels),
    coverage: Number(result.coverage.toFixed(4)),
    ...first,
    policySha256: policyTextSha256(next),
    calibrationSha256: calibrationSha256(next),
    labelsSha256: sampleLabelsSha256(s, policy, until),
    labelSource: { kind: "sample", policyVersion: policy.version, sample: s.sample, until },
    certifiedAt: until,
    ...(next.cascade
      ? {
          tiers: [
            {
              ...(next.model ? { model: next.model } : {}),
              ...first,
              threshold: next.autoThreshold,
              calibrationSha256: calibrationSha256(next),
            },
            ...next.cascade.map((tier, i) => ({
              model: tier.model,
              ...tierProvenance(s, i + 1),
              threshold: tier.autoThreshold,
              calibrationSha256: calibrationSha256(tier),
            })),
          ],
        }
      : {}),
  };
  // Where the certified threshold is not the policy's own, one phrase says why.
  const above =
    t !== null && next.autoThreshold > policy.autoThreshold
      ? [
          `certified at ${next.autoThreshold}, above ${policy.id}@${policy.version}'s own ${policy.autoThreshold}: the plan's fixed sequence, tested strictest first, stopped at the first threshold whose bound was over the target, so ${next.autoThreshold} is the lowest that passed`,
        ]
      : [];
  const notes = [
    registeredSentence(result),
    ...above,
    `no refit was tried with it: the plan was registered on ${policy.id}@${policy.version}'s calibration, so the proposal keeps its maps${next.cascade ? ` and sets every model's threshold to max(${t ?? "t"}, its own)` : ""}`,
  ];
  return { policy: { ...next, certificate }, result, notes };
}

/**
 * The summary a registered proposal is written with: the metrics of the labels held (what the
 * report shows), but the registered version, threshold and certificate, no cascade learn-then-test,
 * and the verdict saying no refit was tried.
 */
export function registeredSummary(summary: CalibrationSummary, r: RegisteredProposal): CalibrationSummary {
  const { cascade: _learnThenTest, certificate: _certificate, ...rest } = summary;
  const t = r.result.threshold;
  const verdict = `no change: no refit was tried, as the registered plan was tested on this version's own maps (on the labels held, the fit said: ${summary.comparison.verdict})`;
  return {
    ...rest,
    temperature: r.policy.temperature,
    comparison: { ...summary.comparison, change: false, verdict },
    threshold: {
      threshold: t === null ? 1 : r.policy.autoThreshold,
      coverage: r.result.coverage,
      automatedAccuracy: r.result.automated ? 1 - r.result.errors / r.result.automated : Number.NaN,
      automatedAccuracyInterval: r.result.bound === null ? [0, 1] : [1 - r.result.bound, 1],
      labels: r.result.labels,
      notes: [...r.notes],
    },
    certificate: { ...r.result, curve: [] },
    proposedPolicy: r.policy,
  };
}
