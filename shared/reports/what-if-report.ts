/**
 * The what-if report: one self-contained HTML page in the calibration report's style, with what
 * the candidate would change (the headline figures, the flips by option pair) and every sampled
 * item whose decision or route would change, so a reviewer can read the flips themselves.
 */

import { handlingOf } from "../domain/routing.ts";
import {
  changes,
  type WhatIfDecision,
  type WhatIfRow,
  type WhatIfSummary,
} from "../domain/what-if/compare.ts";
import { escapeHtml, num, pct, REPORT_STYLE } from "./report-style.ts";

/** Items listed at most; the page says when more changed. */
const MAX_LISTED = 500;

/** What the page shows. */
export interface WhatIfReport {
  readonly policyId: string;
  readonly liveVersion: number;
  readonly candidateVersion: number;
  readonly since: string;
  /** Where the candidate's answers came from, in words. */
  readonly source: string;
  readonly summary: WhatIfSummary;
  readonly rows: readonly WhatIfRow[];
  /** Lines on cost (seconds and money per 1,000), already worded. */
  readonly cost: readonly string[];
}

/** How one version handles an item: auto, an audit sample (automatic, people label it first), or human and why. */
const side = (d: WhatIfDecision) => {
  const handling = handlingOf(d);
  const route =
    handling === "automated"
      ? "auto"
      : handling === "audit_sample"
        ? "auto (audit sample)"
        : `human: ${d.reason}`;
  return `${escapeHtml(d.chosen)} (${pct(d.topProbability)}), ${route}`;
};

/** The headline table. */
function headline(s: WhatIfSummary): string {
  const row = (what: string, live: string, candidate: string) =>
    `<tr><th scope="row">${what}</th><td>${live}</td><td>${candidate}</td></tr>`;
  const l = s.labelled;
  return `<table id="what-if-summary"><caption>Live against candidate (estimates scaled to the ${num(s.decisions, 0)} decisions the sample stands for)</caption>
<thead><tr><td></td><th scope="col">live</th><th scope="col">candidate</th></tr></thead><tbody>
${row("share automated (audit samples included)", pct(s.coverage.live), pct(s.coverage.candidate))}
${row("of them audit samples (people label them first)", pct(s.auditSamples.live), pct(s.auditSamples.candidate))}
${row(`escalations per day (over ${num(s.days, 1)} days)`, num(s.escalationsPerDay.live, 1), num(s.escalationsPerDay.candidate, 1))}
${row("chosen option changes", "", `${s.flipped.items} of ${s.sampled} sampled (est. ${pct(s.flipped.estimated / s.decisions)})`)}
${row("route auto → human (an audit sample counts as auto)", "", `${s.toHuman.items} (est. ${num(s.toHuman.estimated, 0)})`)}
${row("route human → auto", "", `${s.toAuto.items} (est. ${num(s.toAuto.estimated, 0)})`)}
${row("wrong automatic actions on labelled items", "", `${l.wrong} of ${l.automated} it would automate (of ${l.items} labelled); ≤ ${pct(l.upperBound)} with ${pct(l.confidence)} confidence`)}
</tbody></table>`;
}

/** Renders the page. */
export function renderWhatIf(report: WhatIfReport): string {
  const s = report.summary;
  const flips = s.flips
    .map(
      (f) =>
        `<tr><td>${escapeHtml(f.from)}</td><td>${escapeHtml(f.to)}</td><td>${f.items}</td><td>${num(f.estimated, 0)}</td></tr>`,
    )
    .join("");
  // The same rule as the summary's flips and route changes: an item one version drew for audit
  // and the other automated does not change route.
  const changed = report.rows.filter(changes);
  const listed = changed
    .slice(0, MAX_LISTED)
    .map(
      (r) =>
        `<tr><th scope="row">${escapeHtml(r.itemId)}</th><td>${side(r.live)}</td><td>${side(r.candidate)}</td><td>${escapeHtml(r.label ?? "-")}</td><td>${num(r.weight, 1)}</td></tr>`,
    )
    .join("");
  const more = changed.length > MAX_LISTED ? ` (first ${MAX_LISTED} of ${changed.length})` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>What-if: ${escapeHtml(report.policyId)} v${report.liveVersion} → v${report.candidateVersion}</title>
<style>
${REPORT_STYLE}td:nth-child(2), td:nth-child(3) { text-align: left; }
</style></head>
<body><main>
<h1>What-if: ${escapeHtml(report.policyId)} version ${report.liveVersion} → candidate version ${report.candidateVersion}</h1>
<p>${s.sampled} of the decisions made since ${escapeHtml(report.since.slice(0, 10))}, sampled by live route and option (each weighted by the decisions of its group it stands for); the candidate's answers: ${escapeHtml(report.source)}. Nothing was changed.</p>
${headline(s)}
<p class="notes">Labelled items are mostly ones people got because the live version escalated them: they are not a random sample of what the candidate would automate, so the bound above is a check, not an estimate of the live error rate (decide audit gives that).</p>
<ul id="cost">${report.cost.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>
<h2>Decisions that flip, by option pair</h2>
${flips ? `<table id="flips"><thead><tr><th scope="col">live</th><th scope="col">candidate</th><th scope="col">sampled</th><th scope="col">est. decisions</th></tr></thead><tbody>${flips}</tbody></table>` : "<p>No chosen option changes.</p>"}
<h2>Items whose decision or route would change${more}</h2>
${listed ? `<table id="changed"><thead><tr><th scope="col">item</th><th scope="col">live</th><th scope="col">candidate</th><th scope="col">label</th><th scope="col">weight</th></tr></thead><tbody>${listed}</tbody></table>` : "<p>None.</p>"}
</main></body></html>
`;
}
