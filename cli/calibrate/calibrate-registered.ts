/**
 * What `decide calibrate --plan` says of the registered plan a `--request` writes with its sample
 * (`shared/domain/calibration/certificate/registered-plan.ts`): which plan of the version it is,
 * the level it is tested at (the version's plans share the error budget), that the labels held do
 * not count toward it, and, once drawn, the thresholds it will test. Kept apart from
 * `calibrate-plan.ts` so that the plan's counts and its printing stay one story.
 */
import type { CertificateGoal } from "../../shared/domain/calibration/certificate/certificate.ts";
import type { LabelPlan } from "../../shared/domain/calibration/certificate/label-plan.ts";
import {
  alphaShare,
  type RegisteredPlan,
  registeredLevel,
} from "../../shared/domain/calibration/certificate/registered-plan.ts";

/** The plan a request would register: which of the version's plans, and its level. */
export interface Registration {
  readonly round: number;
  readonly level: number;
  /** Certification samples of the version's earlier plans still waiting for a label. @default 0 */
  readonly waiting?: number;
}

const pct = (x: number) => `${Number((x * 100).toFixed(2))}%`;

/** The goal a new plan's counts are computed at: the claim's target at the plan's level. */
export function testedGoal(goal: CertificateGoal, round: number): CertificateGoal {
  return { maxError: goal.maxError, confidence: registeredLevel(goal.confidence, round) };
}

/**
 * The label plan as a registered plan asks it: the claim's confidence, the counts at the plan's
 * level, and all of them still to get (its certificate rests on its own sample alone).
 */
export function registeredView(tested: LabelPlan, goal: CertificateGoal): LabelPlan {
  return { ...tested, confidence: goal.confidence, remaining: tested.needed };
}

/** The registration in words, beside the plan's counts. */
export function registrationLines(r: Registration | undefined, confidence: number): string[] {
  if (!r) return [];
  const share = `${pct(alphaShare(r.round))} of the ${pct(1 - confidence)} error budget`;
  const waiting = r.waiting ?? 0;
  const earlier =
    r.round > 1 && waiting > 0
      ? [
          `  plan ${r.round - 1}'s sample still has ${waiting} drawn decisions waiting for a label: label them and propose before drawing again (each new plan is tested at a smaller share of the budget, and a drawn decision left unlabelled counts as wrong)`,
        ]
      : [];
  return [
    ...earlier,
    `  a --request registers plan ${r.round} of this version, tested at ${pct(r.level)} confidence (${share}: the version's plans together keep to ${pct(confidence)}); its certificate rests on its own drawn decisions alone, so the labels held do not count toward it, and a drawn decision left unlabelled counts as wrong`,
  ];
}

/** The registered plan written on the drawn records, in words. */
export function registeredRequestLines(plan: RegisteredPlan, sample: string): string[] {
  const ts = plan.thresholds;
  return [
    `  registered plan ${plan.round} (written on every drawn record of ${sample}): ${ts.length} thresholds in a fixed sequence, ${ts[0]} down to ${ts.at(-1)}, tested on these ${plan.size} drawn decisions alone at ${pct(plan.level)} confidence; it certifies the lowest that passes: wrong automatic actions ≤ ${pct(plan.maxError)} among decisions whose acting model's calibrated top probability is at least it`,
  ];
}
