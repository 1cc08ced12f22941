/**
 * What `decide calibrate` prints after a fit: the headline figures, the verdict of the comparison
 * with the policy as it stands, the threshold (or its certificate) and its notes, every field the
 * proposed version changes, reviewer agreement and the off-options guard. The temperature shown
 * is the proposed version's, as in the report and the summary.
 */

import type { CalibrationSummary } from "../../shared/domain/calibration/calibrate.ts";
import { type CandidateComparison, candidateLabel } from "../../shared/domain/calibration/candidates.ts";
import { checkProposal, fieldText } from "../../shared/domain/calibration/proposal-check.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { agreementText } from "../../shared/reports/calibration-report.ts";
import { benchText } from "../../shared/reports/certificate-bench.ts";
import { CommandError, UsageError } from "../args.ts";
import type { Printed } from "../command.ts";
import type { Fitted } from "./calibrate-fit.ts";
import { fitHeadline } from "./calibrate-headline.ts";

/** "temperature 0.571 (gain 0.041 ± 0.008), ...; prior with temperature: not tried (...)" */
function candidatesLine(comparison: CandidateComparison): string {
  const tried = comparison.candidates.map(
    (c) =>
      `${candidateLabel(c.name)} ${c.nll.toFixed(3)} (gain ${c.gain.toFixed(3)} ± ${c.spread.toFixed(3)}${c.name === "vector" ? `, changes the chosen option on ${(c.changedChoices * 100).toFixed(1)}%` : ""})`,
  );
  const skipped = comparison.skipped.map((s) => `${candidateLabel(s.name)}: not tried (${s.reason})`);
  return `candidates (out-of-fold NLL; now ${comparison.current.nll.toFixed(3)}): ${[...tried, ...skipped].join("; ")}`;
}

/**
 * The threshold's notes, indented; with a certificate, its sentence first and the bench's
 * P(certified) and P(wrong | certified) at its setting right after it.
 */
export function thresholdLines(summary: CalibrationSummary): string[] {
  const certificate = summary.certificate;
  // A cascade's certificate is the pair's, over both models: the bench line follows its result.
  const pair = summary.cascade?.result;
  const bench = pair
    ? benchText({ ...pair, threshold: pair.thresholds?.[0] ?? null })
    : // The bench measures learn-then-test on the labels held: no row speaks for a registered plan.
      certificate && !("registered" in certificate) && benchText(certificate);
  return summary.threshold.notes.flatMap((note, i) => {
    const line = `  ${certificate ? "" : "note: "}${note}`;
    return i === 0 && bench ? [line, `  ${bench}`] : [line];
  });
}

/**
 * " (33.0% automated)" after the threshold; nothing with a certificate, whose sentence right
 * below states the share (or that every item goes to people), so that it is said once.
 */
export function automatedShare(summary: CalibrationSummary): string {
  return summary.certificate ? "" : ` (${(summary.threshold.coverage * 100).toFixed(1)}% automated)`;
}

/** One line per field the proposal changes: "temperature 1 -> 1.8353". */
export function changeLines(current: Policy, proposed: Policy): string[] {
  return checkProposal(current, proposed).changes.map(
    (c) => `${c.field} ${fieldText(c.field, c.current)} -> ${fieldText(c.field, c.proposed)}`,
  );
}

/** The lines of a fit, where its report and summary were written, and its proposed version. */
export function printFitted(fitted: Fitted): Printed {
  const { policy, summary, paths } = fitted;
  const proposed = summary.proposedPolicy;
  const lines = [
    `${policy.id}: ${fitHeadline(summary)}`,
    `  calibration: ${summary.comparison.verdict}`,
    `  ${candidatesLine(summary.comparison)}`,
    `  temperature ${policy.temperature} -> ${proposed.temperature}`,
    `  autoThreshold ${policy.autoThreshold} -> ${proposed.autoThreshold}${automatedShare(summary)}`,
    ...thresholdLines(summary),
    `  proposed version ${proposed.version} changes: ${changeLines(policy, proposed).join("; ") || "nothing"}`,
  ];
  if (fitted.agreement) lines.push(`  ${agreementText(fitted.agreement)}`);
  if (fitted.offOptions) lines.push(`  off-options guard: ${fitted.offOptions.note}`);
  lines.push(`report: ${paths.report}\nsummary: ${paths.summary}`);
  const { version } = fitted;
  switch (version.kind) {
    case "refused":
      return {
        lines,
        exitCode: 1,
        error: new CommandError(
          `the proposed version would be refused by apply: ${version.refusals.join("; ")}`,
        ),
      };
    case "not-written":
      lines.push(
        `proposed policy version ${proposed.version} not written; rerun with --apply to write ${version.path}`,
      );
      return { lines, exitCode: 0 };
    case "exists":
      return {
        lines,
        exitCode: 2,
        error: new UsageError(`${version.path} exists already; refusing to overwrite it`),
      };
    case "written":
      lines.push(`wrote ${version.path}`);
      return { lines, exitCode: 0 };
  }
}
