/**
 * Which candidate calibrations are tried on a label set, and how each is fitted: a refitted
 * temperature always; a new prior with its temperature when a content-free prior was scored, and
 * vector scaling when every option has `MIN_LABELS_PER_OPTION` labels, both only from
 * `SMALL_LABEL_SET` labels on; every fit pulled toward the calibration in use by the labels it was
 * made on (`shrinkage.ts`). A candidate not tried says why. `candidates.ts` compares what these
 * fits give, out of fold, with the policy as it stands. Pure.
 */
import type { Policy } from "../policy/policy.ts";
import { type CalibrationMap, mapOf } from "./map.ts";
import { correctForPrior } from "./prior.ts";
import { MIN_LABELS_PER_OPTION, TEMPERATURE_PULL } from "./ranges.ts";
import { independentLabels, SMALL_LABEL_SET, shrinkToward } from "./shrinkage.ts";
import { fitTemperature, type LabelledLogits } from "./temperature.ts";
import { fitVectorScaling } from "./vector-scaling.ts";

/** The candidates, and the policy as it stands. */
export type CandidateName = "current" | "temperature" | "prior" | "vector";

/** A candidate not tried, and why. */
export interface SkippedCandidate {
  readonly name: CandidateName;
  readonly reason: string;
}

/** A way of fitting a map on some rows. */
export type Fit = (train: readonly LabelledLogits[]) => CalibrationMap;

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
): { fits: [CandidateName, Fit][]; skipped: SkippedCandidate[] } {
  const prior = policy.prior;
  const fits: [CandidateName, Fit][] = [];
  const skipped: SkippedCandidate[] = [];
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
export function candidateFits(
  policy: Policy,
  rows: readonly LabelledLogits[],
  newPrior: readonly number[] | undefined,
): { fits: [CandidateName, Fit][]; skipped: SkippedCandidate[] } {
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
