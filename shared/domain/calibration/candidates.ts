/**
 * "Never worse than today": every candidate calibration (a refitted temperature; a new prior with
 * its temperature; vector scaling) is compared out of fold, on the same grouped folds, with the
 * policy as it stands. A candidate is proposed only when a one-sided paired test on the per-label
 * out-of-fold NLL differences finds it better (`paired-gain.ts`): its mean gain over the current
 * version exceeds z standard errors, z the normal critical value at 1% divided by the candidates
 * tried (Bonferroni), so already calibrated sets get a proposal on at most about 1%
 * (never-worse-seeds.test.ts); otherwise the verdict is `no change: …` with the figures. (The
 * fold-to-fold spread of five per-fold gains, doubled, met that bar but lost the power to find real
 * miscalibration.) Fits are pulled toward the calibration in use by their label count
 * (`shrinkage.ts`); below `SMALL_LABEL_SET` labels only a temperature is tried, and a richer
 * candidate (a new prior, vector scaling) must also beat the temperature alone by the same test.
 * Which candidates are tried, and how each is fitted: `candidate-fits.ts`. Pure.
 */
import type { Policy } from "../policy/policy.ts";
import { argmax } from "../probability.ts";
import { type CandidateName, candidateFits, type Fit, type SkippedCandidate } from "./candidate-fits.ts";
import { type CalibrationMap, calibratedProbabilities, mapOf } from "./map.ts";
import { accuracy, type LabelledDistribution, negativeLogLikelihood } from "./metrics.ts";
import { criticalRatio, FALSE_PROPOSAL_RATE, pairedGain } from "./paired-gain.ts";
import { independentLabels } from "./shrinkage.ts";
import { foldOf, type LabelledLogits } from "./temperature.ts";

/** One candidate's fit and its out-of-fold figures. */
export interface CandidateResult {
  readonly name: CandidateName;
  /** Fitted on all labels: what the next version would carry. */
  readonly map: CalibrationMap;
  /** Out-of-fold NLL and accuracy over all labels. */
  readonly nll: number;
  readonly accuracy: number;
  /** Per fold (NaN where a fold is empty). */
  readonly foldNll: number[];
  /** The current version's NLL minus this one's (positive: better). */
  readonly gain: number;
  /** Standard error of `gain`, paired label by label (over groups). */
  readonly spread: number;
  readonly beatsCurrent: boolean;
  /**
   * A richer candidate (prior, vector) against the temperature alone, on the same folds: its gain
   * over it and the standard error of that gain. Absent for the temperature and the current version.
   */
  readonly overTemperature?: { readonly gain: number; readonly spread: number };
  /** Whether it may be proposed: beats the current version and, when richer, the temperature. */
  readonly qualifies: boolean;
  /** Share of labelled items whose chosen option differs from the current version's. */
  readonly changedChoices: number;
}

/** The comparison and its verdict. */
export interface CandidateComparison {
  readonly folds: number;
  /** How many standard errors a gain must exceed: one-sided, 1% over the candidates tried. */
  readonly criticalRatio: number;
  /** Labels that count separately (one per group): what the pull toward the calibration in use reads. */
  readonly labels: number;
  readonly current: CandidateResult;
  readonly candidates: CandidateResult[];
  /** Candidates not tried, and why. */
  readonly skipped: SkippedCandidate[];
  /** The candidate proposed; the current version when none beats it. */
  readonly chosen: CandidateName;
  readonly change: boolean;
  /** One line: what changes and why, or `no change: …` with the figures. */
  readonly verdict: string;
}

const LABELS: Record<CandidateName, string> = {
  current: "the policy as it stands",
  temperature: "temperature",
  prior: "prior with temperature",
  vector: "vector scaling",
};

/** Out-of-fold distributions of `fit`, and the NLL of each fold. */
function outOfFold(
  rows: readonly LabelledLogits[],
  fold: readonly number[],
  folds: number,
  fitMap: Fit,
): { distributions: LabelledDistribution[]; foldNll: number[] } {
  const distributions = new Array<LabelledDistribution>(rows.length);
  const foldNll: number[] = [];
  for (let f = 0; f < folds; f++) {
    const held = rows.flatMap((_row, i) => (fold[i] === f ? [i] : []));
    if (held.length === 0) {
      foldNll.push(Number.NaN);
      continue;
    }
    const map = fitMap(rows.filter((_, i) => fold[i] !== f));
    for (const i of held)
      distributions[i] = {
        probabilities: calibratedProbabilities(rows[i]!.logits, map),
        label: rows[i]!.label,
      };
    foldNll.push(negativeLogLikelihood(held.map((i) => distributions[i]!)));
  }
  return { distributions, foldNll };
}

/** One candidate's fit and out-of-fold distributions. */
interface Evaluated {
  readonly name: CandidateName;
  readonly map: CalibrationMap;
  readonly distributions: LabelledDistribution[];
  readonly foldNll: number[];
}

/**
 * Compares the candidates with the policy as it stands; returns the comparison and the
 * out-of-fold distributions of the chosen one (the current version's own when nothing changes).
 */
export function compareCandidates(
  policy: Policy,
  rows: readonly LabelledLogits[],
  options: { readonly folds: number; readonly prior?: readonly number[] | undefined },
): { comparison: CandidateComparison; outOfFold: LabelledDistribution[] } {
  const groups = rows.map((r, i) => r.group ?? `#${i}`);
  const fold = groups.map((g) => foldOf(g, options.folds));
  const currentMap = mapOf(policy);
  const evaluate = (name: CandidateName, fitMap: Fit): Evaluated => {
    const { distributions, foldNll } = outOfFold(rows, fold, options.folds, fitMap);
    return { name, map: name === "current" ? currentMap : fitMap(rows), distributions, foldNll };
  };
  const base = evaluate("current", () => currentMap);
  const { fits, skipped } = candidateFits(policy, rows, options.prior);
  const evaluated = fits.map(([name, fitMap]) => evaluate(name, fitMap));
  const simpler = evaluated.find((e) => e.name === "temperature")!;
  const z = criticalRatio(evaluated.length);
  const gainOver = (c: Evaluated, reference: Evaluated) => {
    const { gain, standardError } = pairedGain(reference.distributions, c.distributions, groups);
    return { gain, spread: standardError };
  };
  const summarize = (c: Evaluated): CandidateResult => {
    const { gain, spread } = gainOver(c, base);
    const nll = negativeLogLikelihood(c.distributions);
    const changed = c.distributions.filter(
      (d, i) => argmax(d.probabilities) !== argmax(base.distributions[i]!.probabilities),
    ).length;
    const beatsCurrent = c.name !== "current" && gain > 0 && gain > z * spread;
    const richer = c.name === "prior" || c.name === "vector";
    const overTemperature = richer ? gainOver(c, simpler) : undefined;
    const beatsSimpler =
      !overTemperature || (overTemperature.gain > 0 && overTemperature.gain > z * overTemperature.spread);
    return {
      name: c.name,
      map: c.map,
      nll,
      accuracy: accuracy(c.distributions),
      foldNll: c.foldNll,
      gain,
      spread,
      beatsCurrent,
      ...(overTemperature ? { overTemperature } : {}),
      qualifies: beatsCurrent && beatsSimpler,
      changedChoices: changed / rows.length,
    };
  };
  const candidates = evaluated.map(summarize);
  const current = summarize(base);
  const winners = candidates.filter((c) => c.qualifies).sort((a, b) => a.nll - b.nll);
  const chosen = winners[0];
  const comparison: CandidateComparison = {
    folds: options.folds,
    criticalRatio: z,
    labels: independentLabels(rows),
    current,
    candidates,
    skipped,
    chosen: chosen?.name ?? "current",
    change: chosen !== undefined,
    verdict: verdictOf(current, candidates, skipped, chosen, z),
  };
  const distributions = chosen
    ? evaluated.find((e) => e.name === chosen.name)!.distributions
    : base.distributions;
  return { comparison, outOfFold: distributions };
}

const n3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

function verdictOf(
  current: CandidateResult,
  candidates: readonly CandidateResult[],
  skipped: SkippedCandidate[],
  chosen: CandidateResult | undefined,
  z: number,
): string {
  const rule = `${z.toFixed(2)} standard errors: one-sided ${FALSE_PROPOSAL_RATE * 100}% over ${candidates.length} candidate${candidates.length === 1 ? "" : "s"}`;
  if (chosen)
    return `${LABELS[chosen.name]} beats the policy as it stands: out-of-fold NLL ${n3(current.nll)} -> ${n3(chosen.nll)} (better by ${n3(chosen.gain)} ± ${n3(chosen.spread)}, more than ${rule})${richerNotProposed(candidates)}`;
  const best = [...candidates].sort((a, b) => a.nll - b.nll)[0];
  if (!best)
    return `no change: no candidate could be fitted (${skipped.map((s) => `${LABELS[s.name]}: ${s.reason}`).join("; ")})`;
  return `no change: the policy as it stands has out-of-fold NLL ${n3(current.nll)}; the best candidate, ${LABELS[best.name]}, ${n3(best.nll)} (${best.gain >= 0 ? "better" : "worse"} by ${n3(Math.abs(best.gain))} ± ${n3(best.spread)}; a change needs more than ${rule})`;
}

/** "; vector scaling not proposed: better than the temperature alone by 0.004 ± 0.006". */
function richerNotProposed(candidates: readonly CandidateResult[]): string {
  return candidates
    .filter((c) => c.beatsCurrent && !c.qualifies && c.overTemperature)
    .map(
      (c) =>
        `; ${LABELS[c.name]} not proposed: ${c.overTemperature!.gain >= 0 ? "better" : "worse"} than the temperature alone by ${n3(Math.abs(c.overTemperature!.gain))} ± ${n3(c.overTemperature!.spread)}`,
    )
    .join("");
}

/** A candidate's name in words ("vector scaling", "the policy as it stands"). */
export function candidateLabel(name: CandidateName): string {
  return LABELS[name];
}
