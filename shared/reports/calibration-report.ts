/**
 * The calibration report: one self-contained HTML page (inline SVG plots, no scripts, no network)
 * with the comparison of every candidate with the policy as it stands, the reliability diagram,
 * the risk–coverage curve (with the certificate's bound), the confusion matrix, and every field
 * the proposed version changes: what a reviewer needs to accept or refuse it.
 */

import type { PolicyAudit } from "../domain/audit/policy-audit.ts";
import type { CalibrationSummary } from "../domain/calibration/calibrate.ts";
import { candidateLabel } from "../domain/calibration/candidates.ts";
import { certificateSentence } from "../domain/calibration/certificate/certificate.ts";
import type { MassFloorProposal } from "../domain/calibration/off-options.ts";
import { checkProposal, fieldText } from "../domain/calibration/proposal-check.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { ReviewerAgreement } from "../domain/review/review.ts";
import type { ReviewerAccuracy } from "../domain/review/review-gold.ts";
import { auditSectionHtml } from "./audit-text.ts";
import { cascadeSectionHtml } from "./calibration-report-cascade.ts";
import { certificateSectionHtml } from "./calibration-report-certificate.ts";
import { reliabilitySvg, riskCoverageSvg } from "./calibration-report-plots.ts";
import { reviewersSectionHtml } from "./calibration-report-reviewers.ts";
import { escapeHtml, num, pct, REPORT_STYLE } from "./report-style.ts";

/** "Reviewer agreement: 9 of 10 audit samples reviewed twice got the same label (90.0%)". */
export function agreementText(agreement: ReviewerAgreement): string {
  if (agreement.pairs === 0) return "Reviewer agreement: no audit sample was reviewed twice yet.";
  const disputed = agreement.pairs - agreement.agreed;
  return `Reviewer agreement: ${agreement.agreed} of ${agreement.pairs} audit samples reviewed twice got the same label from both reviewers (${pct(agreement.agreed / agreement.pairs)})${disputed ? `; ${disputed} disputed, settled (or to be settled) by an admin` : ""}.`;
}

function candidatesTable(summary: CalibrationSummary): string {
  const c = summary.comparison;
  const row = (name: string, nll: number, accuracy: number, gain: string, verdict: string) =>
    `<tr><th scope="row">${escapeHtml(name)}</th><td>${num(nll)}</td><td>${pct(accuracy)}</td><td>${gain}</td><td>${escapeHtml(verdict)}</td></tr>`;
  const rows = [
    row(candidateLabel("current"), c.current.nll, c.current.accuracy, "", c.change ? "replaced" : "kept"),
    ...c.candidates.map((k) =>
      row(
        candidateLabel(k.name),
        k.nll,
        k.accuracy,
        `${num(k.gain)} ± ${num(k.spread)}`,
        k.name === c.chosen ? "proposed" : k.beatsCurrent ? "beats it, another is better" : "not proposed",
      ),
    ),
    ...c.skipped.map(
      (s) =>
        `<tr><th scope="row">${escapeHtml(candidateLabel(s.name))}</th><td colspan="4">not tried: ${escapeHtml(s.reason)}</td></tr>`,
    ),
  ];
  return `<table id="candidates"><caption>Candidates against the policy as it stands (out of fold, ${c.folds} grouped folds)</caption><thead><tr><td></td><th scope="col">NLL</th><th scope="col">accuracy</th><th scope="col">gain ± standard error</th><th scope="col">verdict</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function confusionTable(summary: CalibrationSummary): string {
  const max = Math.max(1, ...summary.confusion.flat());
  const head = summary.options.map((o) => `<th scope="col">${escapeHtml(o)}</th>`).join("");
  const rows = summary.confusion
    .map(
      (row, i) =>
        `<tr><th scope="row">${escapeHtml(summary.options[i]!)}</th>${row
          .map(
            (n) =>
              `<td style="background: rgba(21,101,192,${(n / max).toFixed(2)}); color: ${n / max > 0.5 ? "#fff" : "#000"}">${n}</td>`,
          )
          .join("")}</tr>`,
    )
    .join("");
  return `<table id="confusion"><caption>Confusion (rows: reviewer's label, columns: model's choice)</caption><thead><tr><td></td>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** Every field the proposed version changes, as apply would print it. */
function proposedTable(current: Policy, proposed: Policy): string {
  const check = checkProposal(current, proposed);
  const rows = check.changes
    .map(
      (c) =>
        `<tr><th scope="row">${escapeHtml(c.field)}</th><td>${escapeHtml(fieldText(c.field, c.current))}</td><td>${escapeHtml(fieldText(c.field, c.proposed))}</td></tr>`,
    )
    .join("");
  const refused = check.refusals.length
    ? `<ul class="notes">${check.refusals.map((r) => `<li>${escapeHtml(r)}</li>`).join("")}</ul>`
    : "";
  return `<table id="proposed"><caption>${escapeHtml(proposed.id)} version ${current.version} -> ${proposed.version}: every field that changes</caption><thead><tr><td></td><th scope="col">now</th><th scope="col">proposed</th></tr></thead><tbody>${rows}</tbody></table>${refused}`;
}

function thresholdSection(summary: CalibrationSummary, live: PolicyAudit | undefined): string {
  const t = summary.threshold;
  const certificate = summary.certificate;
  // The certificate's sentence is the section's head: not again among the notes.
  const said = certificate ? certificateSentence(certificate) : undefined;
  // A cascade's line heads its own section.
  const rest = t.notes.filter(
    (n) => n !== said && !n.startsWith("cascade: ") && !summary.cascade?.notes.includes(n),
  );
  const notes = rest.length
    ? `<ul class="notes">${rest.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
    : "";
  const head = certificate
    ? certificateSectionHtml(certificate, live, summary.policy.version)
    : `<p>Automate at a calibrated top probability of <strong>${num(t.threshold, 4)}</strong> or more: ${pct(t.coverage)} of items automated, automated accuracy ${pct(t.automatedAccuracy)} (95% interval ${pct(t.automatedAccuracyInterval[0])} to ${pct(t.automatedAccuracyInterval[1])})${t.expectedCostPerItem !== undefined ? `, expected cost ${num(t.expectedCostPerItem)} per item` : ""}.</p>`;
  const table = summary.thresholdTable
    .map(
      (r) =>
        `<tr><td>${r.threshold}</td><td>${r.automated}</td><td>${pct(r.coverage)}</td><td>${pct(r.automatedAccuracy)}</td></tr>`,
    )
    .join("");
  return `<h2>${summary.cascade ? "The first model alone" : "Proposed auto threshold"}</h2>
${head}
${notes}
<table id="thresholds"><caption>At other thresholds (only decisions the policy would act on: an option people always review, or out of scope, is never automated)</caption><thead><tr><th scope="col">threshold</th><th scope="col">labelled it would automate</th><th scope="col">share automated (estimated)</th><th scope="col">accuracy of the automated</th></tr></thead><tbody>${table}</tbody></table>`;
}

/**
 * Renders the report page for `current`; `agreement` when the labels came from the decisions
 * table, `live` (the policy's audit estimate) when its audit samples could be read.
 */
export function renderReport(
  current: Policy,
  summary: CalibrationSummary,
  agreement?: ReviewerAgreement,
  offOptions?: MassFloorProposal,
  live?: PolicyAudit,
  reviewers?: readonly ReviewerAccuracy[],
): string {
  const m = (label: string, raw: string, now: string, cal: string) =>
    `<tr><th scope="row">${label}</th><td>${raw}</td><td>${now}</td><td>${cal}</td></tr>`;
  const ece = (s: CalibrationSummary["raw"]) =>
    `${num(s.ece)} [${num(s.eceInterval[0])}, ${num(s.eceInterval[1])}]`;
  const [r, c, p] = [summary.raw, summary.current, summary.calibrated];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Calibration: ${escapeHtml(summary.policy.id)} v${summary.policy.version}</title>
<style>
${REPORT_STYLE}</style></head>
<body><main>
<h1>Calibration report: ${escapeHtml(summary.policy.id)} version ${summary.policy.version}</h1>
<p>${summary.labels} labelled decisions. Proposed temperature <strong id="temperature">T = ${summary.temperature}</strong>.
<span id="verdict">${escapeHtml(summary.comparison.verdict)}</span>. Figures are out of fold: each item is calibrated by a fit made without it. Intervals are 95% bootstrap.</p>
${candidatesTable(summary)}
<table id="metrics"><caption>Raw, as the policy stands, and proposed</caption><thead><tr><td></td><th scope="col">raw</th><th scope="col">now</th><th scope="col">proposed</th></tr></thead><tbody>
${m("accuracy", pct(r.accuracy), pct(c.accuracy), pct(p.accuracy))}
${m("ECE (top label)", ece(r), ece(c), ece(p))}
${m("Brier score", num(r.brier), num(c.brier), num(p.brier))}
${m("negative log-likelihood", num(r.nll), num(c.nll), num(p.nll))}
${m("area under risk–coverage", num(r.aurc), num(c.aurc), num(p.aurc))}
</tbody></table>
${agreement ? `<p id="agreement">${escapeHtml(agreementText(agreement))}</p>` : ""}
${reviewers ? reviewersSectionHtml(reviewers, summary.certificate?.maxError) : ""}
${offOptions ? `<p id="off-options">Off-options guard (allowed-token mass of ${offOptions.rows} labelled decisions): ${escapeHtml(offOptions.note)}.</p>` : ""}
${summary.cascade ? cascadeSectionHtml(summary.cascade) : ""}
${thresholdSection(summary, live)}
<h2>Plots</h2>
<div class="plots">
<figure>${reliabilitySvg(summary.reliability.current, summary.reliability.calibrated)}<figcaption>Reliability: grey as the policy stands, blue proposed.</figcaption></figure>
<figure>${riskCoverageSvg(summary)}<figcaption>Risk–coverage (proposed): how often automatic actions are wrong against the share automated${summary.certificate ? ", with the certificate's bound and target" : ""}.</figcaption></figure>
</div>
${confusionTable(summary)}
${live ? auditSectionHtml([live], escapeHtml) : ""}
<h2>Prediction sets</h2>
<p>Split conformal sets at ${pct(summary.conformal.targetCoverage)} target coverage: include every option with calibrated probability ≥ ${num(summary.conformal.minProbability, 4)}.
On held-out labels they covered ${pct(summary.conformal.heldOutCoverage)} with ${num(summary.conformal.meanSetSize, 2)} options on average.</p>
<h2>Proposed policy version</h2>
${proposedTable(current, summary.proposedPolicy)}
</main></body></html>
`;
}
