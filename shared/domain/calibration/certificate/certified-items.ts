/**
 * The labelled items as a certificate sees them: each row's calibrated top probability under a
 * map, whether that top option is wrong, and whether it may be automated at all. One definition,
 * used where a certificate is made (`calibrate.ts`) and where it is recomputed on its labels to
 * be checked (`shared/use-cases/calibration/certificate-labels.ts`); and a cascade's, each tier's answer
 * under that tier's own map (`cascade-certificate.ts`).
 */
import type { Policy } from "../../policy/policy.ts";
import { argmax } from "../../probability.ts";
import { optionAutomated } from "../../routing.ts";
import { type CalibrationMap, calibratedProbabilities } from "../map.ts";
import type { LabelledLogits } from "../temperature.ts";
import type { CascadeItem, TierJudgement } from "./cascade-certificate.ts";
import type { CertifiedItem } from "./certificate.ts";
import { UNLABELLED } from "./certificate-units.ts";

/**
 * Whether the top option of `probabilities` may be automated at all (automatable, not out of
 * scope): routing's `optionAutomated`, the rule every count of "automated" shares.
 */
export function topAutomatable(policy: Policy, probabilities: readonly number[]): boolean {
  return optionAutomated(policy, policy.options[argmax(probabilities)]!.id);
}

/** The labelled items under `map`, in the rows' order. */
export function certifiedItems(
  policy: Policy,
  rows: readonly LabelledLogits[],
  map: CalibrationMap,
): CertifiedItem[] {
  return rows.map((r) => {
    const p = calibratedProbabilities(r.logits, map);
    const k = argmax(p);
    return {
      confidence: p[k]!,
      wrong: r.label === UNLABELLED || k !== r.label,
      automatable: topAutomatable(policy, p),
      ...(r.label === UNLABELLED ? { unlabelled: true } : {}),
      ...(r.inclusionProbability !== undefined ? { inclusionProbability: r.inclusionProbability } : {}),
      ...(r.group !== undefined ? { group: r.group } : {}),
      ...(r.key !== undefined ? { key: r.key } : {}),
      ...(r.kind !== undefined ? { kind: r.kind } : {}),
    };
  });
}

function judged(
  policy: Policy,
  logits: readonly number[],
  label: number,
  map: CalibrationMap,
): TierJudgement {
  const p = calibratedProbabilities(logits, map);
  const k = argmax(p);
  return {
    confidence: p[k]!,
    wrong: label === UNLABELLED || k !== label,
    automatable: topAutomatable(policy, p),
  };
}

/** A labelled row of a two-tier cascade: the first tier's logits, and the second's where it was asked. */
export interface CascadeRow extends LabelledLogits {
  readonly secondLogits?: readonly number[] | undefined;
  /** The model file and prompt layout of the second answer, where known (its certificate names them). */
  readonly secondModelSha256?: string | undefined;
  readonly secondPromptVersion?: string | undefined;
}

/**
 * The labelled items of a two-tier cascade under each tier's map (first, second), in the rows'
 * order: what `certifyCascade` reads. The options and what may be automated are the policy's for
 * both tiers.
 */
export function cascadeItems(
  policy: Policy,
  rows: readonly CascadeRow[],
  maps: readonly [CalibrationMap, CalibrationMap],
): CascadeItem[] {
  return rows.map((r) => ({
    first: judged(policy, r.logits, r.label, maps[0]),
    ...(r.secondLogits ? { second: judged(policy, r.secondLogits, r.label, maps[1]) } : {}),
    ...(r.inclusionProbability !== undefined ? { inclusionProbability: r.inclusionProbability } : {}),
    ...(r.group !== undefined ? { group: r.group } : {}),
    ...(r.key !== undefined ? { key: r.key } : {}),
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
  }));
}
