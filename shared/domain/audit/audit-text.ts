/**
 * The audit estimate in words and in a table: the lines `decide audit` prints, and the HTML
 * section the decisions page and the calibration report show (each passes its own escaping).
 */
import { pct } from "../calibration/report-style.ts";
import type { AutoErrorEstimate } from "./estimate.ts";
import type { PolicyAudit } from "./policy-audit.ts";

/** "1.8% (95% interval 0.9% to 3.4%; 212 audit labels, 4 wrong)", or why there is no figure. */
export function estimateText(e: AutoErrorEstimate): string {
  if (e.labelled === 0)
    return e.samples === 0
      ? "no audit sample yet"
      : `no audit label yet (${e.samples} drawn, waiting for review)`;
  const coverage = e.covered < 1 ? `; covers ${pct(e.covered)} of automatic decisions` : "";
  return `${pct(e.rate)} (${Math.round(e.confidence * 100)}% interval ${pct(e.interval[0])} to ${pct(e.interval[1])}; ${e.labelled} audit labels, ${e.wrong} wrong${coverage})`;
}

/** Whether the interval's upper end passed the policy's error budget. */
export function overBudget(audit: PolicyAudit): boolean {
  return audit.target !== undefined && audit.overall.labelled > 0 && audit.overall.interval[1] > audit.target;
}

/** The verdict against the budget, when the policy sets one. */
export function budgetText(audit: PolicyAudit): string | undefined {
  if (audit.target === undefined) return undefined;
  if (audit.overall.labelled === 0) return `budget ${pct(audit.target)}: no label to judge by yet`;
  return overBudget(audit)
    ? `OVER BUDGET: the upper bound ${pct(audit.overall.interval[1])} passes maxAutoError ${pct(audit.target)}`
    : `within budget: the upper bound ${pct(audit.overall.interval[1])} is at most maxAutoError ${pct(audit.target)}`;
}

/** What `decide audit` prints for one policy. */
export function auditLines(audit: PolicyAudit): string[] {
  const lines = [
    `${audit.policyId}: wrong automatic actions since ${audit.since.slice(0, 10)}: ${estimateText(audit.overall)}`,
  ];
  const budget = budgetText(audit);
  if (budget) lines.push(`  ${budget}`);
  for (const { option, estimate } of audit.byOption)
    lines.push(`  chosen ${option}: ${estimateText(estimate)}`);
  for (const s of audit.strata)
    lines.push(
      `  v${s.policyVersion} band ${s.band}: audited at ${pct(s.inclusionProbability)}, ${s.samples} drawn, ${s.labelled} labelled, ${s.wrong} wrong`,
    );
  for (const note of audit.notes) lines.push(`  note: ${note}`);
  return lines;
}

/**
 * The HTML section: one row per policy, then its options, and the notes; `esc` escapes text. The
 * table is a `stack` table with labelled cells, so that a page with the stacked-table style (the
 * review pages) lays it out a row per block on a narrow screen instead of breaking its words.
 */
export function auditSectionHtml(audits: readonly PolicyAudit[], esc: (text: string) => string): string {
  const rows = audits
    .flatMap((a) => [
      `<tr><td data-label="policy">${esc(a.policyId)}</td><td data-label="chosen">all</td><td data-label="estimate">${esc(estimateText(a.overall))}</td><td data-label="error budget">${esc(budgetText(a) ?? "no budget set")}</td></tr>`,
      ...a.byOption.map(
        (o) =>
          `<tr><td data-label="policy">${esc(a.policyId)}</td><td data-label="chosen">${esc(o.option)}</td><td data-label="estimate">${esc(estimateText(o.estimate))}</td><td data-label="error budget"></td></tr>`,
      ),
    ])
    .join("");
  const notes = audits.flatMap((a) => a.notes.map((n) => `<li>${esc(`${a.policyId}: ${n}`)}</li>`));
  return `<section id="live-audit" aria-labelledby="live-audit-title"><h2 id="live-audit-title">Wrong automatic actions (live audits)</h2>
<p>Estimated from audit samples only (stratified by confidence band, weighted by the inverse of each sample's chance of being drawn); labels on items escalated for other reasons are left out.</p>
<table class="stack" id="live-audit-table"><thead><tr><th scope="col">policy</th><th scope="col">chosen</th><th scope="col">estimate</th><th scope="col">error budget</th></tr></thead><tbody>${rows}</tbody></table>${notes.length ? `<ul class="notes">${notes.join("")}</ul>` : ""}</section>`;
}
