/**
 * The calibration report: one self-contained HTML page (inline SVG plots, no scripts, no network)
 * with the reliability diagram, the risk–coverage curve, the confusion matrix and the figures a
 * reviewer needs to accept or refuse the proposed policy version.
 */

import { auditSectionHtml } from "../audit/audit-text.ts";
import type { PolicyAudit } from "../audit/policy-audit.ts";
import type { ReviewerAgreement } from "../review.ts";
import type { CalibrationSummary } from "./calibrate.ts";
import type { ReliabilityBin } from "./metrics.ts";
import type { MassFloorProposal } from "./off-options.ts";
import { escapeHtml, num, pct, REPORT_STYLE } from "./report-style.ts";

const SIZE = 320;
const PAD = 40;
const scale = (v: number) => PAD + v * (SIZE - 2 * PAD);
const flip = (v: number) => SIZE - scale(v);

function axes(xLabel: string, yLabel: string): string {
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (t) =>
        `<text x="${scale(t)}" y="${SIZE - PAD + 16}" text-anchor="middle">${t}</text><text x="${PAD - 6}" y="${flip(t) + 4}" text-anchor="end">${t}</text>`,
    )
    .join("");
  return `<line x1="${PAD}" y1="${SIZE - PAD}" x2="${SIZE - PAD}" y2="${SIZE - PAD}" stroke="#333"/>
<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${SIZE - PAD}" stroke="#333"/>${ticks}
<text x="${SIZE / 2}" y="${SIZE - 6}" text-anchor="middle">${xLabel}</text>
<text x="12" y="${SIZE / 2}" text-anchor="middle" transform="rotate(-90 12 ${SIZE / 2})">${yLabel}</text>`;
}

function reliabilitySvg(raw: ReliabilityBin[], calibrated: ReliabilityBin[]): string {
  const bars = (bins: ReliabilityBin[], color: string, offset: number, label: string) =>
    bins
      .filter((b) => b.count > 0)
      .map((b) => {
        const width = ((b.upper - b.lower) * (SIZE - 2 * PAD)) / 2 - 1;
        const x = scale(b.lower) + offset * (width + 1);
        return `<rect class="${label}" x="${x}" y="${flip(b.accuracy)}" width="${Math.max(1, width)}" height="${scale(b.accuracy) - PAD}" fill="${color}"><title>${label} ${num(b.lower, 2)}–${num(b.upper, 2)}: accuracy ${pct(b.accuracy)}, confidence ${pct(b.confidence)}, ${b.count} items</title></rect>`;
      })
      .join("");
  return `<svg id="reliability" role="img" aria-labelledby="rel-title rel-desc" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">
<title id="rel-title">Reliability diagram</title><desc id="rel-desc">Accuracy per confidence bin before (grey) and after (blue) calibration; the diagonal is perfect calibration.</desc>
${axes("confidence (top probability)", "accuracy")}
<line x1="${scale(0)}" y1="${flip(0)}" x2="${scale(1)}" y2="${flip(1)}" stroke="#999" stroke-dasharray="4 4"/>
${bars(raw, "#9e9e9e", 0, "raw")}${bars(calibrated, "#1565c0", 1, "calibrated")}</svg>`;
}

function riskCoverageSvg(summary: CalibrationSummary): string {
  const points = summary.riskCoverage;
  const maxRisk = Math.max(0.05, ...points.map((p) => p.risk));
  const path = points
    .map((p, i) => `${i ? "L" : "M"}${scale(p.coverage).toFixed(1)},${flip(p.risk / maxRisk).toFixed(1)}`)
    .join(" ");
  const chosen = summary.threshold.coverage;
  return `<svg id="risk-coverage" role="img" aria-labelledby="rc-title rc-desc" viewBox="0 0 ${SIZE} ${SIZE}" width="${SIZE}" height="${SIZE}">
<title id="rc-title">Risk–coverage curve</title><desc id="rc-desc">Error rate of automated decisions (up to ${pct(maxRisk)}) against the share automated; the line marks the chosen threshold.</desc>
${axes("share automated", `error rate (× ${num(maxRisk, 2)})`)}
<path d="${path}" fill="none" stroke="#1565c0" stroke-width="2"/>
<line x1="${scale(chosen)}" y1="${PAD}" x2="${scale(chosen)}" y2="${SIZE - PAD}" stroke="#c62828" stroke-dasharray="3 3"><title>chosen threshold: ${pct(chosen)} automated</title></line></svg>`;
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

/** "Reviewer agreement: 9 of 10 audit samples reviewed twice got the same label (90.0%)". */
export function agreementText(agreement: ReviewerAgreement): string {
  if (agreement.pairs === 0) return "Reviewer agreement: no audit sample was reviewed twice yet.";
  return `Reviewer agreement: ${agreement.agreed} of ${agreement.pairs} audit samples reviewed twice got the same label from both reviewers (${pct(agreement.agreed / agreement.pairs)}); the others were settled by an admin.`;
}

/** What dividing out the prior changed on the labelled sample. */
export function priorText(correction: NonNullable<CalibrationSummary["priorCorrection"]>): string {
  return `Prior correction (${correction.prior.map((p) => pct(p)).join(", ")} on content-free items): accuracy ${pct(correction.without.accuracy)} -> ${pct(correction.with.accuracy)}, out-of-fold NLL ${num(correction.without.nll)} -> ${num(correction.with.nll)} after temperature scaling: ${correction.adopted ? "proposed as the policy's prior" : "not proposed (it does not lower the NLL)"}.`;
}

/**
 * Renders the report page; `agreement` when the labels came from the decisions table, `live`
 * (the policy's audit estimate) when its audit samples could be read.
 */
export function renderReport(
  summary: CalibrationSummary,
  agreement?: ReviewerAgreement,
  offOptions?: MassFloorProposal,
  live?: PolicyAudit,
): string {
  const m = (label: string, raw: string, cal: string) =>
    `<tr><th scope="row">${label}</th><td>${raw}</td><td>${cal}</td></tr>`;
  const t = summary.threshold;
  const notes = t.notes.length
    ? `<ul class="notes">${t.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
    : "";
  const table = summary.thresholdTable
    .map(
      (r) =>
        `<tr><td>${r.threshold}</td><td>${pct(r.coverage)}</td><td>${pct(r.automatedAccuracy)}</td></tr>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Calibration: ${escapeHtml(summary.policy.id)} v${summary.policy.version}</title>
<style>
${REPORT_STYLE}</style></head>
<body><main>
<h1>Calibration report: ${escapeHtml(summary.policy.id)} version ${summary.policy.version}</h1>
<p>${summary.labels} labelled decisions. Temperature fitted by minimizing negative log-likelihood:
<strong>T = ${num(summary.temperature)}</strong> (per fold: ${summary.foldTemperatures.map((x) => num(x)).join(", ")}).
Calibrated figures are out of fold: each item is calibrated with a temperature fitted without it. Intervals are 95% bootstrap.</p>
<table id="metrics"><caption>Before and after calibration</caption><thead><tr><td></td><th scope="col">raw</th><th scope="col">calibrated</th></tr></thead><tbody>
${m("accuracy", pct(summary.raw.accuracy), pct(summary.calibrated.accuracy))}
${m("ECE (top label)", `${num(summary.raw.ece)} [${num(summary.raw.eceInterval[0])}, ${num(summary.raw.eceInterval[1])}]`, `${num(summary.calibrated.ece)} [${num(summary.calibrated.eceInterval[0])}, ${num(summary.calibrated.eceInterval[1])}]`)}
${m("Brier score", num(summary.raw.brier), num(summary.calibrated.brier))}
${m("negative log-likelihood", num(summary.raw.nll), num(summary.calibrated.nll))}
${m("area under risk–coverage", num(summary.raw.aurc), num(summary.calibrated.aurc))}
</tbody></table>
${summary.priorCorrection ? `<p id="prior">${escapeHtml(priorText(summary.priorCorrection))}</p>` : ""}
${agreement ? `<p id="agreement">${escapeHtml(agreementText(agreement))}</p>` : ""}
${offOptions ? `<p id="off-options">Off-options guard (allowed-token mass of ${offOptions.rows} labelled decisions): ${escapeHtml(offOptions.note)}.</p>` : ""}
<p id="vector-scaling">Vector scaling (temperature plus one offset per option): out-of-fold NLL ${num(summary.vectorScaling.outOfFoldNll)} against ${num(summary.vectorScaling.temperatureOutOfFoldNll)} for temperature alone; ${summary.vectorScaling.chosen ? `<strong>proposed</strong> (offsets ${summary.vectorScaling.bias.map((b) => num(b, 2)).join(", ")}); it changes the chosen option on ${pct(summary.vectorScaling.changedChoices)} of the labelled items` : "not proposed"}.</p>
<h2>Proposed auto threshold</h2>
<p>Automate at a calibrated top probability of <strong>${num(t.threshold, 4)}</strong> or more:
${pct(t.coverage)} of items automated, automated accuracy ${pct(t.automatedAccuracy)} (95% interval ${pct(t.automatedAccuracyInterval[0])} to ${pct(t.automatedAccuracyInterval[1])})${t.expectedCostPerItem !== undefined ? `, expected cost ${num(t.expectedCostPerItem)} per item` : ""}.</p>
${notes}
<table id="thresholds"><caption>At other thresholds</caption><thead><tr><th scope="col">threshold</th><th scope="col">automated</th><th scope="col">accuracy of the automated</th></tr></thead><tbody>${table}</tbody></table>
<h2>Plots</h2>
<div class="plots">
<figure>${reliabilitySvg(summary.reliability.raw, summary.reliability.calibrated)}<figcaption>Reliability: grey raw, blue calibrated.</figcaption></figure>
<figure>${riskCoverageSvg(summary)}<figcaption>Risk–coverage (calibrated).</figcaption></figure>
</div>
${confusionTable(summary)}
${live ? auditSectionHtml([live], escapeHtml) : ""}
<h2>Prediction sets</h2>
<p>Split conformal sets at ${pct(summary.conformal.targetCoverage)} target coverage: include every option with calibrated probability ≥ ${num(summary.conformal.minProbability, 4)}.
On held-out labels they covered ${pct(summary.conformal.heldOutCoverage)} with ${num(summary.conformal.meanSetSize, 2)} options on average.</p>
<h2>Proposed policy version</h2>
<pre>${escapeHtml(JSON.stringify({ id: summary.proposedPolicy.id, version: summary.proposedPolicy.version, temperature: summary.proposedPolicy.temperature, autoThreshold: summary.proposedPolicy.autoThreshold }, null, 2))}</pre>
</main></body></html>
`;
}
