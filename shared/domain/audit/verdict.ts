/**
 * The audit verdict against a policy's error budget, in three states, each with its evidence:
 *
 * - **over budget**: the *lower* end of the interval is above the budget. The interval is the
 *   estimator's two-sided one at the audit confidence, so a policy exactly at its budget is
 *   called over in at most (1 − confidence) / 2 of windows (2.5% at 95%): that is the stated
 *   false-alarm rate of one window. Audit samples drawn but not labelled count as right here (the
 *   most favourable reading), so reviewers who skip cannot make a policy look worse.
 * - **within budget**: the *upper* end is at or below the budget, reading every sample drawn more
 *   than `AUDIT.overdueAfterHours` ago and still unlabelled as wrong, and every automatic decision
 *   the labelled strata do not speak for (a band with samples but no label) as wrong: so skipping
 *   the hard samples, or leaving a band unlabelled, can never buy a "within".
 * - **not enough audit labels**: neither; with how many more labels per band would settle it if
 *   the rates seen so far held (and which waiting samples to label first).
 *
 * Bounding what is missing by its extremes is the worst-case (Manski) treatment of missing data:
 * it assumes nothing about why a label is missing.
 */
import { AUDIT } from "../topology.ts";
import { type AuditSample, type AutoErrorEstimate, estimateAutoError } from "./estimate.ts";

/** The three states. */
export const BUDGET_STATES = ["within_budget", "over_budget", "not_enough_labels"] as const;
/** One of {@link BUDGET_STATES}. */
export type BudgetState = (typeof BUDGET_STATES)[number];

/** More labels one stratum needs (at the rates seen so far) to settle the verdict. */
export interface LabelsToSettle {
  readonly stratum: string;
  /** Labels to add beyond those it has. */
  readonly more: number;
}

/** The verdict and its evidence. */
export interface BudgetVerdict {
  readonly state: BudgetState;
  readonly budget: number;
  /** Lower end over all automatic decisions: unlabelled samples right, unspoken-for decisions right. */
  readonly lower: number;
  /** Upper end: overdue unlabelled samples wrong, automatic decisions no label speaks for wrong. */
  readonly upper: number;
  /** Share of automatic decisions (by the samples' weights) in strata with a label. */
  readonly covered: number;
  /** Samples drawn and not labelled, and of those, drawn before the overdue limit. */
  readonly unanswered: number;
  readonly overdue: number;
  /** Chance of "over budget" in one window for a policy exactly at its budget. */
  readonly falseAlarm: number;
  /** For "not enough": more labels per stratum at the rates seen (empty: audits alone cannot settle it soon). */
  readonly toSettle?: readonly LabelsToSettle[];
}

/** A sample drawn and still unlabelled after the overdue limit. */
export type VerdictSample = AuditSample & { readonly overdue?: boolean };

const relabel = (samples: readonly VerdictSample[], wrong: boolean): AuditSample[] =>
  samples.map((s) => {
    if (s.label !== undefined || !s.overdue) return s;
    // A label that differs from the choice reads as wrong; the choice itself as right.
    return { ...s, label: wrong ? `${s.chosen}\u0000wrong` : s.chosen };
  });

/** The interval over all automatic decisions: the unspoken-for share at its extremes. */
function whole(e: AutoErrorEstimate): { lower: number; upper: number } {
  if (e.labelled === 0) return { lower: 0, upper: 1 };
  return { lower: e.covered * e.interval[0], upper: e.covered * e.interval[1] + (1 - e.covered) };
}

/** The verdict of `samples` against `budget` (see the module comment). */
export function budgetVerdict(
  samples: readonly VerdictSample[],
  budget: number,
  confidence: number = AUDIT.confidence,
): BudgetVerdict {
  const best = whole(estimateAutoError(relabel(samples, false), confidence));
  const worstEstimate = estimateAutoError(relabel(samples, true), confidence);
  const worst = whole(worstEstimate);
  const unanswered = samples.filter((s) => s.label === undefined);
  const state: BudgetState =
    best.lower > budget ? "over_budget" : worst.upper <= budget ? "within_budget" : "not_enough_labels";
  return {
    state,
    budget,
    lower: best.lower,
    upper: worst.upper,
    covered: estimateAutoError(samples, confidence).covered,
    unanswered: unanswered.length,
    overdue: unanswered.filter((s) => s.overdue).length,
    falseAlarm: (1 - confidence) / 2,
    ...(state === "not_enough_labels" ? { toSettle: labelsToSettle(samples, budget, confidence) } : {}),
  };
}

/** Multiples of the labels tried when looking for how many would settle the verdict. */
const MULTIPLES = [2, 3, 4, 6, 8, 12, 16, 24, 32];

/**
 * How many more labels per stratum would settle the verdict if each stratum's rate stayed what its
 * labels show: every labelled sample counted `m` times for the smallest `m` of {@link MULTIPLES}
 * that settles it (waiting samples labelled like the rest of their stratum). Empty when even 32
 * times the labels would not: the rate is too near the budget for audits alone.
 */
function labelsToSettle(
  samples: readonly VerdictSample[],
  budget: number,
  confidence: number,
): LabelsToSettle[] {
  const labelled = samples.filter((s) => s.label !== undefined);
  const strata = [...new Set(samples.map((s) => s.stratum))].sort();
  const have = (stratum: string) => labelled.filter((s) => s.stratum === stratum).length;
  for (const m of MULTIPLES) {
    const scaled = labelled.flatMap((s) => Array.from({ length: m }, () => s));
    const e = whole(estimateAutoError(scaled, confidence));
    if (e.lower > budget || e.upper <= budget)
      return strata.map((stratum) => {
        const drawn = samples.filter((s) => s.stratum === stratum).length;
        // A stratum with no label yet needs its waiting samples labelled, and as many again.
        return {
          stratum,
          more: Math.max(0, Math.ceil(Math.max(have(stratum), 1) * m) - have(stratum), drawn - have(stratum)),
        };
      });
  }
  return [];
}
