/**
 * The proposed next policy version: the calibration map the comparison chose (rounded, inside the
 * ranges apply accepts), the auto threshold, the prediction sets, the drift baseline and, when the
 * threshold was certified, its certificate. Every other field is the current version's.
 */
import {
  CERTIFICATE_METHOD,
  type LabelSource,
  type PolicyCertificate,
} from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import type { CertificateResult } from "./certificate/certificate.ts";
import type { ConformalRule } from "./conformal.ts";
import type { CalibrationMap } from "./map.ts";
import { calibrationSha256, certificateProblem, labelSetSha256, policyTextSha256 } from "./provenance.ts";
import { CALIBRATION_RANGES } from "./ranges.ts";
import type { LabelledLogits } from "./temperature.ts";

const clamp = (v: number, range: { readonly min: number; readonly max: number }) =>
  Math.max(range.min, Math.min(range.max, v));
const round = (v: number, digits = 4) => Number(v.toFixed(digits));

/** What the proposal is made of. */
export interface ProposalParts {
  /** The map the next version carries, as written (a new fit passed through {@link roundMap}). */
  readonly map: CalibrationMap;
  readonly threshold: number;
  readonly conformal: ConformalRule;
  readonly baseline: NonNullable<Policy["baseline"]>;
  /** The certification, with the labels and what scored them; absent when not asked for. */
  readonly certified?: {
    readonly result: CertificateResult;
    readonly rows: readonly LabelledLogits[];
    readonly modelSha256: string | null;
    readonly promptVersion: string | null;
    readonly at: Date;
    /** Where the labels are, so that they can be read back and the certificate recomputed. */
    readonly source?: LabelSource;
  };
}

/** A map as a policy file carries it: rounded, inside the ranges apply accepts. */
export function roundMap(map: CalibrationMap): CalibrationMap {
  return {
    temperature: clamp(round(map.temperature), CALIBRATION_RANGES.temperature),
    ...(map.optionBias
      ? { optionBias: map.optionBias.map((b) => clamp(round(b), CALIBRATION_RANGES.optionBias)) }
      : {}),
    ...(map.prior
      ? { prior: map.prior.map((p) => clamp(Number(p.toPrecision(4)), CALIBRATION_RANGES.prior)) }
      : {}),
  };
}

/** The calibration fields a proposal replaces (the rest of the policy is kept as it is). */
function calibrationFields(policy: Policy, parts: ProposalParts): Partial<Policy> {
  const map = parts.map;
  return {
    temperature: map.temperature,
    ...(map.optionBias ? { optionBias: [...map.optionBias] } : {}),
    ...(map.prior ? { prior: [...map.prior] } : {}),
    autoThreshold: clamp(round(Math.min(1, parts.threshold)), CALIBRATION_RANGES.autoThreshold),
    predictionSet: {
      minProbability: round(parts.conformal.minProbability),
      targetCoverage: parts.conformal.targetCoverage,
    },
    baseline: {
      meanConfidence: round(parts.baseline.meanConfidence),
      escalationRate: round(parts.baseline.escalationRate),
      optionMix: parts.baseline.optionMix.map((m) => round(m)),
    },
    version: policy.version + 1,
  };
}

/** The next version of `policy`. */
export function proposeVersion(policy: Policy, parts: ProposalParts): Policy {
  const { optionBias: _bias, prior: _prior, certificate: old, ...kept } = policy;
  const next: Policy = { ...kept, ...calibrationFields(policy, parts) } as Policy;
  if (parts.certified) return { ...next, certificate: certificateOf(next, parts.certified) };
  // An old certificate stays only while it still holds for the new calibration and threshold.
  if (old && certificateProblem({ ...next, certificate: old }) === undefined)
    return { ...next, certificate: old };
  return next;
}

function certificateOf(
  proposed: Policy,
  certified: NonNullable<ProposalParts["certified"]>,
): PolicyCertificate {
  const r = certified.result;
  return {
    maxError: r.maxError,
    confidence: r.confidence,
    method: CERTIFICATE_METHOD,
    threshold: r.threshold,
    bound: r.bound === null ? null : Number(r.bound.toPrecision(4)),
    ...(r.evidence ? { evidence: r.evidence } : {}),
    ...(r.kinds ? { kinds: r.kinds } : {}),
    automated: r.automated,
    errors: r.errors,
    labels: r.labels,
    coverage: round(r.coverage),
    modelSha256: certified.modelSha256,
    promptVersion: certified.promptVersion,
    policySha256: policyTextSha256(proposed),
    calibrationSha256: calibrationSha256(proposed),
    labelsSha256: labelSetSha256(certified.rows),
    ...(certified.source ? { labelSource: certified.source } : {}),
    certifiedAt: certified.at.toISOString(),
  };
}
