/**
 * What `decide calibrate` prints after a fit: the headline figures, the threshold and its notes,
 * what vector scaling and the prior would change, reviewer agreement and the off-options guard.
 */
import type { CalibrationSummary } from "../shared/domain/calibration/calibrate.ts";
import type { MassFloorProposal } from "../shared/domain/calibration/off-options.ts";
import { agreementText, priorText } from "../shared/domain/calibration/report.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import type { ReviewerAgreement } from "../shared/domain/review.ts";

/** Prints the fit of `policy` and where its report and summary were written. */
export function printCalibration(
  policy: Policy,
  summary: CalibrationSummary,
  extra: { agreement: ReviewerAgreement | undefined; offOptions: MassFloorProposal | undefined },
  paths: { report: string; summary: string },
): void {
  const proposed = summary.proposedPolicy;
  console.log(
    `${policy.id}: ${summary.labels} labels; ECE ${summary.raw.ece.toFixed(3)} raw -> ${summary.calibrated.ece.toFixed(3)} calibrated (out of fold)`,
  );
  console.log(`  temperature ${policy.temperature} -> ${proposed.temperature}`);
  console.log(
    `  autoThreshold ${policy.autoThreshold} -> ${proposed.autoThreshold} (${(summary.threshold.coverage * 100).toFixed(1)}% automated)`,
  );
  for (const note of summary.threshold.notes) console.log(`  note: ${note}`);
  const vector = summary.vectorScaling;
  console.log(
    `  vector scaling: out-of-fold NLL ${vector.outOfFoldNll.toFixed(4)} vs ${vector.temperatureOutOfFoldNll.toFixed(4)} (temperature alone): ${vector.chosen ? `proposed, offsets ${vector.bias.map((b) => b.toFixed(2)).join(", ")}, chosen option changes on ${(vector.changedChoices * 100).toFixed(1)}% of items` : "not proposed"}`,
  );
  if (summary.priorCorrection) console.log(`  ${priorText(summary.priorCorrection)}`);
  if (extra.agreement) console.log(`  ${agreementText(extra.agreement)}`);
  if (extra.offOptions) console.log(`  off-options guard: ${extra.offOptions.note}`);
  console.log(`report: ${paths.report}\nsummary: ${paths.summary}`);
}
