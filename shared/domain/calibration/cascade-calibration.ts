/**
 * A two-tier cascade's part of a calibration: the second tier's own calibration map, fitted on the
 * labelled items the first tier passed on to it (the only items it ever answers), then both
 * thresholds chosen together by the cascade's certificate (`cascade-certificate.ts`), so that the
 * rate of wrong automatic actions over everything either tier automates stays within the target.
 * The proposed version carries both thresholds, the second tier's map, and a certificate naming
 * every tier (its model, prompt layout, threshold and calibration), which goes stale when any of
 * them changes (`provenance.ts`). Beside it, the front: how many items per 1,000 go to people at
 * each certified target, for the first tier alone and for the cascade, on the same labels.
 *
 * As for one tier, the maps are fitted on the labels that then certify: the guarantee is the
 * certificate's (Learn-then-Test over the fixed grid of pairs) given those maps, approximate by
 * what the fit learns from those labels (docs/calibration.md, "Certify a cascade", checked in
 * test/unit/cascade-second-map-reuse.test.ts); no split is kept apart.
 */
import { tierPolicy } from "../cascade.ts";
import type { CascadeTier } from "../policy/cascade-fields.ts";
import {
  CERTIFICATE_METHOD,
  type LabelSource,
  type PolicyCertificate,
} from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import { compareCandidates } from "./candidates.ts";
import { type CascadeCertificateResult, certifyCascade } from "./certificate/cascade-certificate.ts";
import { type CertificateGoal, certifyThreshold } from "./certificate/certificate.ts";
import { UNLABELLED } from "./certificate/certificate-units.ts";
import { type CascadeRow, cascadeItems, certifiedItems } from "./certificate/certified-items.ts";
import { type CalibrationMap, mapOf } from "./map.ts";
import { roundMap } from "./proposal.ts";
import { calibrationSha256, labelSetSha256, policyTextSha256, provenanceOf } from "./provenance.ts";
import { MIN_FIT_LABELS } from "./ranges.ts";
import type { LabelledLogits } from "./temperature.ts";

/** When and from what a cascade is certified: the time, where the labels are, their floor. */
export interface CascadeMade {
  readonly at: Date;
  readonly source?: LabelSource | undefined;
  /** The lowest threshold the labels may speak for (`label-selection.ts`). @default 0 */
  readonly floor?: number | undefined;
}

/** Targets the front is drawn at. */
export const FRONT_TARGETS = [0.01, 0.02, 0.05, 0.1] as const;

/** One point of the front: items per 1,000 sent to people at a certified target (null: none certified). */
export interface FrontPoint {
  readonly maxError: number;
  readonly firstAlone: number | null;
  readonly cascade: number | null;
}

/** What the cascade's calibration gives, as the summary and report carry it. */
export interface CascadeCalibration {
  /** The second tier's model, and the labels it had answered. */
  readonly model: string;
  readonly secondLabels: number;
  /** How its map was chosen: fitted, or kept (with why). */
  readonly fit: string;
  readonly temperature: number;
  readonly result: CascadeCertificateResult;
  /** Items per 1,000 to people at the target, the first tier alone (its own certificate) and the cascade. */
  readonly peoplePer1000: { readonly firstAlone: number | null; readonly cascade: number | null };
  readonly front: readonly FrontPoint[];
  readonly notes: readonly string[];
}

const round4 = (v: number) => Number(v.toFixed(4));
const perThousand = (coverage: number) => Math.round((1 - coverage) * 1000);

const pct = (x: number) => `${Number((x * 100).toPrecision(3))}%`;

/** One line: the certified pair and what it means, beside the first model alone. */
export function cascadeSentence(c: CascadeCalibration): string {
  const r = c.result;
  const alone =
    c.peoplePer1000.firstAlone === null
      ? "the first model alone certifies nothing at this target"
      : `the first model alone: ${c.peoplePer1000.firstAlone}`;
  if (!r.thresholds)
    return `cascade: no pair of thresholds keeps wrong automatic actions over both models ≤ ${pct(r.maxError)} with ${pct(r.confidence)} confidence (${r.labels} labels, ${c.secondLabels} answered by ${c.model})`;
  return `cascade: the first model acts at ≥ ${r.thresholds[0]}, ${c.model} at ≥ ${r.thresholds[1]}: wrong automatic actions over both ≤ ${pct(r.maxError)} with ${pct(r.confidence)} confidence (observed ${r.errors} of ${r.automated} automated, bound ${pct(r.bound!)}); to people per 1,000: ${c.peoplePer1000.cascade} (${alone})`;
}

/**
 * The label set a cascade's certificate names: the first tier's rows with the second tier's
 * logits where it answered, so that a changed second answer changes the hash as well.
 */
export function cascadeLabelSetSha256(rows: readonly CascadeRow[]): string {
  return labelSetSha256(rows.map((r) => ({ ...r, logits: [...r.logits, ...(r.secondLogits ?? [])] })));
}

/** The second tier's answers as rows of their own (what its map is fitted on). */
function secondRows(rows: readonly CascadeRow[]): LabelledLogits[] {
  return rows.flatMap((r) =>
    r.secondLogits && r.label !== UNLABELLED
      ? [
          {
            logits: r.secondLogits,
            label: r.label,
            ...(r.group !== undefined ? { group: r.group } : {}),
            ...(r.key !== undefined ? { key: r.key } : {}),
            ...(r.secondModelSha256 ? { modelSha256: r.secondModelSha256 } : {}),
            ...(r.secondPromptVersion ? { promptVersion: r.secondPromptVersion } : {}),
          },
        ]
      : [],
  );
}

/** The second tier's map: fitted when it answered enough labelled items and a fit beats its own. */
function secondMap(policy: Policy, rows: readonly LabelledLogits[]): { map: CalibrationMap; fit: string } {
  const view = tierPolicy(policy, 1);
  if (rows.length < MIN_FIT_LABELS)
    return {
      map: mapOf(view),
      fit: `kept: it answered ${rows.length} labelled items, fewer than the ${MIN_FIT_LABELS} a fit needs`,
    };
  const { comparison } = compareCandidates(view, rows, { folds: 5 });
  const chosen = [comparison.current, ...comparison.candidates].find((c) => c.name === comparison.chosen)!;
  return { map: comparison.change ? roundMap(chosen.map) : mapOf(view), fit: comparison.verdict };
}

/** The proposed second tier: its fitted map and certified threshold, its other fields kept. */
function proposedTier(tier: CascadeTier, map: CalibrationMap, threshold: number): CascadeTier {
  const { prior: _prior, optionBias: _bias, ...kept } = tier;
  return {
    ...kept,
    temperature: map.temperature,
    ...(map.optionBias ? { optionBias: [...map.optionBias] } : {}),
    ...(map.prior ? { prior: [...map.prior] } : {}),
    autoThreshold: threshold,
  };
}

/** Items per 1,000 to people at `goal`: the first tier alone, and the cascade. */
function peopleAt(
  proposed: Policy,
  rows: readonly CascadeRow[],
  maps: readonly [CalibrationMap, CalibrationMap],
  goal: CertificateGoal,
  floor = 0,
): FrontPoint {
  const alone = certifyThreshold(certifiedItems(proposed, rows, maps[0]), goal, floor);
  const both = certifyCascade(cascadeItems(proposed, rows, maps), goal, floor);
  return {
    maxError: goal.maxError,
    firstAlone: alone.threshold === null ? null : perThousand(alone.coverage),
    cascade: both.thresholds === null ? null : perThousand(both.coverage),
  };
}

/** The certificate of `next` (both thresholds set): the pair's counts over both models, and each model's provenance. */
function cascadeCertificate(
  next: Policy,
  result: CascadeCertificateResult,
  rows: readonly CascadeRow[],
  later: ReturnType<typeof provenanceOf>,
  goal: CertificateGoal,
  made: CascadeMade,
): PolicyCertificate {
  const first = provenanceOf(rows);
  const nextTier = next.cascade![0]!;
  const [t1, t2] = [next.autoThreshold, nextTier.autoThreshold];
  return {
    maxError: goal.maxError,
    confidence: goal.confidence,
    method: CERTIFICATE_METHOD,
    threshold: result.thresholds ? t1 : null,
    bound: result.bound === null ? null : Number(result.bound.toPrecision(4)),
    ...(result.evidence ? { evidence: result.evidence } : {}),
    ...(result.kinds ? { kinds: result.kinds } : {}),
    automated: result.automated,
    errors: result.errors,
    labels: result.labels,
    coverage: round4(result.coverage),
    modelSha256: first.modelSha256,
    promptVersion: first.promptVersion,
    policySha256: policyTextSha256(next),
    calibrationSha256: calibrationSha256(next),
    labelsSha256: cascadeLabelSetSha256(rows),
    ...(made.source ? { labelSource: made.source } : {}),
    certifiedAt: made.at.toISOString(),
    tiers: [
      {
        ...(next.model ? { model: next.model } : {}),
        modelSha256: first.modelSha256,
        promptVersion: first.promptVersion,
        threshold: t1,
        calibrationSha256: calibrationSha256(next),
      },
      {
        model: nextTier.model,
        modelSha256: later.modelSha256,
        promptVersion: later.promptVersion,
        threshold: t2,
        calibrationSha256: calibrationSha256(nextTier),
      },
    ],
  };
}

/**
 * Calibrates the second tier of `proposed` (the first tier's fields already fitted) and certifies
 * both thresholds together on `rows`; returns the next version with them and its certificate,
 * and what the summary and report show. A policy without exactly one later tier is refused.
 */
export function calibrateCascade(
  proposed: Policy,
  rows: readonly CascadeRow[],
  goal: CertificateGoal,
  made: CascadeMade,
): { policy: Policy; cascade: CascadeCalibration } {
  const tier = proposed.cascade?.[0];
  if (!tier || proposed.cascade!.length !== 1)
    throw new RangeError(
      `${proposed.id}: a cascade's certificate covers two models; this policy asks ${1 + (proposed.cascade?.length ?? 0)}`,
    );
  const answered = secondRows(rows);
  const second = secondMap(proposed, answered);
  const maps = [mapOf(proposed), second.map] as const;
  const result = certifyCascade(cascadeItems(proposed, rows, maps), goal, made.floor);
  const [t1, t2] = result.thresholds ?? [1, 1];
  const nextTier = proposedTier(tier, second.map, t2);
  const next: Policy = { ...proposed, autoThreshold: t1, cascade: [nextTier] };
  const later = provenanceOf(answered);
  const certificate = cascadeCertificate(next, result, rows, later, goal, made);
  const atTarget = peopleAt(proposed, rows, maps, goal, made.floor);
  const notes: string[] = [];
  if (later.modelSha256 === null && answered.length > 0)
    notes.push(
      `${tier.model}'s answers name ${later.models.length === 0 ? "no" : "several"} model files: the certificate reads as stale wherever it is checked`,
    );
  return {
    policy: { ...next, certificate },
    cascade: {
      model: tier.model,
      secondLabels: answered.length,
      fit: second.fit,
      temperature: second.map.temperature,
      result,
      peoplePer1000: { firstAlone: atTarget.firstAlone, cascade: atTarget.cascade },
      front: FRONT_TARGETS.map((maxError) =>
        peopleAt(proposed, rows, maps, { maxError, confidence: goal.confidence }, made.floor),
      ),
      notes,
    },
  };
}
