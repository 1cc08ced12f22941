/**
 * What `decide calibrate` prints after a fit: the headline figures, the verdict of the comparison
 * with the policy as it stands, the threshold (or its certificate) and its notes, every field the
 * proposed version changes, reviewer agreement and the off-options guard. The temperature shown
 * is the proposed version's, as in the report and the summary.
 */
import type { CalibrationSummary } from "../shared/domain/calibration/calibrate.ts";
import { type CandidateComparison, candidateLabel } from "../shared/domain/calibration/candidates.ts";
import type { MassFloorProposal } from "../shared/domain/calibration/off-options.ts";
import { checkProposal, fieldText } from "../shared/domain/calibration/proposal-check.ts";
import { agreementText } from "../shared/domain/calibration/report.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import type { ReviewerAgreement } from "../shared/domain/review.ts";

/** "temperature 0.571 (gain 0.041 ± 0.008), ...; prior with temperature: not tried (...)" */
function candidatesLine(comparison: CandidateComparison): string {
  const tried = comparison.candidates.map(
    (c) =>
      `${candidateLabel(c.name)} ${c.nll.toFixed(3)} (gain ${c.gain.toFixed(3)} ± ${c.spread.toFixed(3)}${c.name === "vector" ? `, changes the chosen option on ${(c.changedChoices * 100).toFixed(1)}%` : ""})`,
  );
  const skipped = comparison.skipped.map((s) => `${candidateLabel(s.name)}: not tried (${s.reason})`);
  return `candidates (out-of-fold NLL; now ${comparison.current.nll.toFixed(3)}): ${[...tried, ...skipped].join("; ")}`;
}

/** One line per field the proposal changes: "temperature 1 -> 1.8353". */
export function changeLines(current: Policy, proposed: Policy): string[] {
  return checkProposal(current, proposed).changes.map(
    (c) => `${c.field} ${fieldText(c.field, c.current)} -> ${fieldText(c.field, c.proposed)}`,
  );
}

/** Prints the fit of `policy` and where its report and summary were written. */
export function printCalibration(
  policy: Policy,
  summary: CalibrationSummary,
  extra: { agreement: ReviewerAgreement | undefined; offOptions: MassFloorProposal | undefined },
  paths: { report: string; summary: string },
): void {
  const proposed = summary.proposedPolicy;
  console.log(
    `${policy.id}: ${summary.labels} labels; ECE ${summary.current.ece.toFixed(3)} now -> ${summary.calibrated.ece.toFixed(3)} proposed (out of fold)`,
  );
  console.log(`  calibration: ${summary.comparison.verdict}`);
  console.log(`  ${candidatesLine(summary.comparison)}`);
  console.log(`  temperature ${policy.temperature} -> ${proposed.temperature}`);
  console.log(
    `  autoThreshold ${policy.autoThreshold} -> ${proposed.autoThreshold} (${(summary.threshold.coverage * 100).toFixed(1)}% automated)`,
  );
  for (const note of summary.threshold.notes) console.log(`  ${summary.certificate ? "" : "note: "}${note}`);
  console.log(
    `  proposed version ${proposed.version} changes: ${changeLines(policy, proposed).join("; ") || "nothing"}`,
  );
  if (extra.agreement) console.log(`  ${agreementText(extra.agreement)}`);
  if (extra.offOptions) console.log(`  off-options guard: ${extra.offOptions.note}`);
  console.log(`report: ${paths.report}\nsummary: ${paths.summary}`);
}
