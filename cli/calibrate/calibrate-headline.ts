/**
 * The first figures of a fit as the CLI prints them. From `SMALL_LABEL_SET` labels up: the label
 * count and the ECE now and proposed. Below it, the label count leads, with how far a fit on so few
 * labels may move the calibration, then the per-fold NLL gains the choice rests on, and ECE only
 * with its 95% interval: a 10-bin ECE on 24 labels is mostly binning noise (it was printed bare as
 * `ECE 0.294 -> 0.098`).
 */
import type { CalibrationSummary } from "../../shared/domain/calibration/calibrate.ts";
import { candidateLabel } from "../../shared/domain/calibration/candidates.ts";
import { SMALL_LABEL_SET, shrinkWeight } from "../../shared/domain/calibration/shrinkage.ts";

const n3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${n3(x)}`;

/** "+0.004, -0.002, ..." of the chosen candidate, or the best one when nothing changes. */
function foldGains(summary: CalibrationSummary): string {
  const { comparison } = summary;
  const shown =
    comparison.candidates.find((c) => c.name === comparison.chosen) ??
    [...comparison.candidates].sort((a, b) => a.nll - b.nll)[0];
  if (!shown) return "no candidate fitted";
  const gains = shown.foldNll.flatMap((v, f) =>
    Number.isNaN(v) ? [] : [signed(comparison.current.foldNll[f]! - v)],
  );
  return `out-of-fold NLL gain of ${candidateLabel(shown.name)} per fold ${gains.join(", ")} nats`;
}

/** "0.294 (95% 0.150 to 0.410)" */
const eceWithInterval = (m: CalibrationSummary["current"]) =>
  `${n3(m.ece)} (95% ${n3(m.eceInterval[0])} to ${n3(m.eceInterval[1])})`;

/** Whether the fit rests on fewer labels than `SMALL_LABEL_SET`. */
export function isSmallSet(summary: CalibrationSummary): boolean {
  return summary.comparison.labels < SMALL_LABEL_SET;
}

/** The label count and the figures a reader should see first (see the file's comment). */
export function fitHeadline(summary: CalibrationSummary): string {
  if (!isSmallSet(summary))
    return `${summary.labels} labels; ECE ${n3(summary.current.ece)} now -> ${n3(summary.calibrated.ece)} proposed (out of fold)`;
  const kept = Math.round(shrinkWeight(summary.comparison.labels) * 100);
  return `${summary.labels} labels (fewer than ${SMALL_LABEL_SET}: a fit moves the calibration in use ${kept}% of the way, and only a temperature is tried); ${foldGains(summary)}; ECE ${eceWithInterval(summary.current)} now -> ${eceWithInterval(summary.calibrated)} proposed (out of fold)`;
}
