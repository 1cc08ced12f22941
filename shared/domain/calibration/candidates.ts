/**
 * "Never worse than today": every candidate calibration (a refitted temperature; a new prior with
 * its temperature; vector scaling) is compared out of fold, on the same grouped folds, with the
 * policy as it stands. A candidate is proposed only when its out-of-fold NLL beats the current
 * version's by more than {@link SPREADS} fold-to-fold spreads of that gain (the standard deviation
 * of the per-fold gains: a gain inside its own noise is no gain); otherwise the verdict is
 * `no change: …` with the figures. Two spreads (about a one-sided 0.5% test per candidate on
 * five folds) keep proposals on already calibrated sets under 1% (never-worse-seeds.test.ts). Fits
 * are pulled toward the calibration in use by their label count (`shrinkage.ts`); below
 * `SMALL_LABEL_SET` labels only a temperature is tried, and a richer candidate (a new prior, vector
 * scaling) must also beat the temperature alone by as much. Pure.
 */
import type { Policy } from "../policy/policy.ts";
import { argmax } from "../probability.ts";
import { type CalibrationMap, calibratedProbabilities, mapOf } from "./map.ts";
import { accuracy, type LabelledDistribution, negativeLogLikelihood } from "./metrics.ts";
import { correctForPrior } from "./prior.ts";
import { MIN_LABELS_PER_OPTION, TEMPERATURE_PULL } from "./ranges.ts";
import { independentLabels, SMALL_LABEL_SET, shrinkToward } from "./shrinkage.ts";
import { fitTemperature, foldOf, type LabelledLogits } from "./temperature.ts";
import { fitVectorScaling } from "./vector-scaling.ts";

/** The candidates, and the policy as it stands. */
export type CandidateName = "current" | "temperature" | "prior" | "vector";

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
  /** Standard deviation of the per-fold gains. */
  readonly spread: number;
  readonly beatsCurrent: boolean;
  /**
   * A richer candidate (prior, vector) against the temperature alone, on the same folds: its gain
   * over it and the spread of that gain. Absent for the temperature and the current version.
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
  /** Labels that count separately (one per group): what the pull toward the calibration in use reads. */
  readonly labels: number;
  readonly current: CandidateResult;
  readonly candidates: CandidateResult[];
  /** Candidates not tried, and why. */
  readonly skipped: { readonly name: CandidateName; readonly reason: string }[];
  /** The candidate proposed; the current version when none beats it. */
  readonly chosen: CandidateName;
  readonly change: boolean;
  /** One line: what changes and why, or `no change: …` with the figures. */
  readonly verdict: string;
}

/** How many fold-to-fold spreads a gain must exceed to count (see the header). */
const SPREADS = 2;

/** A way of fitting a map on some rows. */
type Fit = (train: readonly LabelledLogits[]) => CalibrationMap;

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

const withPrior = (rows: readonly LabelledLogits[], prior: readonly number[] | undefined) =>
  prior ? rows.map((r) => ({ ...r, logits: correctForPrior(r.logits, prior) })) : rows;

/** Why the richer candidates are not tried on `rows`, or undefined when they are. */
function tooFewForRicher(rows: readonly LabelledLogits[]): string | undefined {
  const labels = independentLabels(rows);
  return labels < SMALL_LABEL_SET
    ? `below ${SMALL_LABEL_SET} labels only a temperature is tried (${labels} here)`
    : undefined;
}

/** The richer candidates that apply to these labels, and those skipped with the reason. */
function richerFits(
  policy: Policy,
  rows: readonly LabelledLogits[],
  newPrior: readonly number[] | undefined,
): { fits: [CandidateName, Fit][]; skipped: CandidateComparison["skipped"] } {
  const prior = policy.prior;
  const fits: [CandidateName, Fit][] = [];
  const skipped: CandidateComparison["skipped"] = [];
  const small = tooFewForRicher(rows);
  if (small)
    return {
      fits,
      skipped: [
        { name: "prior", reason: small },
        { name: "vector", reason: small },
      ],
    };
  if (newPrior)
    fits.push([
      "prior",
      (train) => ({ prior: newPrior, temperature: fitTemperature(withPrior(train, newPrior)) }),
    ]);
  else skipped.push({ name: "prior", reason: "no content-free prior was scored: give --prior" });
  const counts = policy.options.map((_, k) => rows.filter((r) => r.label === k).length);
  const few = policy.options.flatMap((o, k) =>
    counts[k]! < MIN_LABELS_PER_OPTION ? [`${o.id} ${counts[k]}`] : [],
  );
  if (few.length > 0)
    skipped.push({
      name: "vector",
      reason: `needs ${MIN_LABELS_PER_OPTION} labels per option (${few.join(", ")})`,
    });
  else
    fits.push([
      "vector",
      (train) => {
        const v = fitVectorScaling(withPrior(train, prior));
        return { prior, temperature: v.temperature, optionBias: v.bias };
      },
    ]);
  return { fits, skipped };
}

/**
 * Every candidate that applies, each fit pulled toward the calibration in use by the labels it was
 * made on; and those skipped with the reason.
 */
function candidateFits(
  policy: Policy,
  rows: readonly LabelledLogits[],
  newPrior: readonly number[] | undefined,
): { fits: [CandidateName, Fit][]; skipped: CandidateComparison["skipped"] } {
  const current = mapOf(policy);
  const prior = policy.prior;
  const pull = { temperature: policy.temperature, strength: TEMPERATURE_PULL };
  const temperature: Fit = (train) => ({ prior, temperature: fitTemperature(withPrior(train, prior), pull) });
  const richer = richerFits(policy, rows, newPrior);
  const fits = [["temperature", temperature] as [CandidateName, Fit], ...richer.fits].map(
    ([name, fitMap]): [CandidateName, Fit] => [
      name,
      (train) => shrinkToward(fitMap(train), current, independentLabels(train)),
    ],
  );
  return { fits, skipped: richer.skipped };
}

/** One candidate's fit and out-of-fold distributions. */
interface Evaluated {
  readonly name: CandidateName;
  readonly map: CalibrationMap;
  readonly distributions: LabelledDistribution[];
  readonly foldNll: number[];
}

/** `c`'s out-of-fold NLL gain over `reference` (positive: better), and the spread of the per-fold gains. */
function gainOver(c: Evaluated, reference: Evaluated): { gain: number; spread: number } {
  const gains = c.foldNll.flatMap((v, f) => (Number.isNaN(v) ? [] : [reference.foldNll[f]! - v]));
  return {
    gain: negativeLogLikelihood(reference.distributions) - negativeLogLikelihood(c.distributions),
    spread: standardDeviation(gains),
  };
}

function standardDeviation(values: readonly number[]): number {
  if (values.length < 2) return Number.POSITIVE_INFINITY;
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1));
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
  const fold = rows.map((r, i) => foldOf(r.group ?? String(i), options.folds));
  const currentMap = mapOf(policy);
  const evaluate = (name: CandidateName, fitMap: Fit): Evaluated => {
    const { distributions, foldNll } = outOfFold(rows, fold, options.folds, fitMap);
    return { name, map: name === "current" ? currentMap : fitMap(rows), distributions, foldNll };
  };
  const base = evaluate("current", () => currentMap);
  const { fits, skipped } = candidateFits(policy, rows, options.prior);
  const evaluated = fits.map(([name, fitMap]) => evaluate(name, fitMap));
  const simpler = evaluated.find((e) => e.name === "temperature")!;
  const summarize = (c: Evaluated): CandidateResult => {
    const { gain, spread } = gainOver(c, base);
    const nll = negativeLogLikelihood(c.distributions);
    const changed = c.distributions.filter(
      (d, i) => argmax(d.probabilities) !== argmax(base.distributions[i]!.probabilities),
    ).length;
    const beatsCurrent = c.name !== "current" && gain > 0 && gain > SPREADS * spread;
    const richer = c.name === "prior" || c.name === "vector";
    const overTemperature = richer ? gainOver(c, simpler) : undefined;
    const beatsSimpler =
      !overTemperature ||
      (overTemperature.gain > 0 && overTemperature.gain > SPREADS * overTemperature.spread);
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
    labels: independentLabels(rows),
    current,
    candidates,
    skipped,
    chosen: chosen?.name ?? "current",
    change: chosen !== undefined,
    verdict: verdictOf(current, candidates, skipped, chosen),
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
  skipped: CandidateComparison["skipped"],
  chosen: CandidateResult | undefined,
): string {
  if (chosen)
    return `${LABELS[chosen.name]} beats the policy as it stands: out-of-fold NLL ${n3(current.nll)} -> ${n3(chosen.nll)} (better by ${n3(chosen.gain)}, more than twice the fold-to-fold spread ${n3(chosen.spread)})${richerNotProposed(candidates)}`;
  const best = [...candidates].sort((a, b) => a.nll - b.nll)[0];
  if (!best)
    return `no change: no candidate could be fitted (${skipped.map((s) => `${LABELS[s.name]}: ${s.reason}`).join("; ")})`;
  return `no change: the policy as it stands has out-of-fold NLL ${n3(current.nll)}; the best candidate, ${LABELS[best.name]}, ${n3(best.nll)} (${best.gain >= 0 ? "better" : "worse"} by ${n3(Math.abs(best.gain))}, fold-to-fold spread ${n3(best.spread)})`;
}

/** "; vector scaling not proposed: 0.004 better than the temperature alone, within twice the spread 0.006". */
function richerNotProposed(candidates: readonly CandidateResult[]): string {
  return candidates
    .filter((c) => c.beatsCurrent && !c.qualifies && c.overTemperature)
    .map(
      (c) =>
        `; ${LABELS[c.name]} not proposed: ${c.overTemperature!.gain >= 0 ? "better" : "worse"} than the temperature alone by ${n3(Math.abs(c.overTemperature!.gain))}, fold-to-fold spread ${n3(c.overTemperature!.spread)}`,
    )
    .join("");
}

/** A candidate's name in words ("vector scaling", "the policy as it stands"). */
export function candidateLabel(name: CandidateName): string {
  return LABELS[name];
}
