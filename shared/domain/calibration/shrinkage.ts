/**
 * Proposals that cannot hurt much on few labels: a fit made on n labels moves the calibration in
 * use only part of the way, n / (n + n0), in log T and in the offsets, as if the calibration in use
 * were worth n0 labels of its own (`CURRENT_CALIBRATION_LABELS`). The same pull is applied inside
 * every fold, so the out-of-fold comparison judges the shrunk fit, the one that would be proposed.
 * Pure.
 */
import type { CalibrationMap } from "./map.ts";
import type { LabelledLogits } from "./temperature.ts";

/**
 * What the calibration in use counts for, in labels: a fit on this many labels moves it half way.
 * 100: with the temperature's own pull (`TEMPERATURE_PULL`), no proposal on 20–30 labels raised
 * fresh NLL by more than 0.05 nats in 600 seeded sets (the temperature pull alone let several through, up to +0.09), and 1,000
 * labels still keep 91% of a fit's move (calibration-small-sets.test.ts; docs/calibration.md).
 */
export const CURRENT_CALIBRATION_LABELS = 100;

/** Below this many labels (groups) only a temperature is tried, and the output leads with the count. */
export const SMALL_LABEL_SET = 100;

/** Labels that count separately: one per group (near-duplicates share one). */
export function independentLabels(rows: readonly LabelledLogits[]): number {
  return new Set(rows.map((r, i) => r.group ?? `#${i}`)).size;
}

/** The share of a fit's move that a proposal keeps on `labels` labels: n / (n + n0). */
export function shrinkWeight(labels: number): number {
  return labels / (labels + CURRENT_CALIBRATION_LABELS);
}

/** `fitted` pulled toward `current` by the weight of `labels` labels (log T and offsets). */
export function shrinkToward(
  fitted: CalibrationMap,
  current: CalibrationMap,
  labels: number,
): CalibrationMap {
  const w = shrinkWeight(labels);
  const temperature = Math.exp(
    Math.log(current.temperature) + w * (Math.log(fitted.temperature) - Math.log(current.temperature)),
  );
  const optionBias = fitted.optionBias?.map((b, k) => {
    const from = current.optionBias?.[k] ?? 0;
    return from + w * (b - from);
  });
  return {
    temperature,
    ...(fitted.prior ? { prior: fitted.prior } : {}),
    ...(optionBias ? { optionBias } : {}),
  };
}
