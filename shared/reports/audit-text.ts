/**
 * The audit estimate in words and in a table: the lines `decide audit` prints, and the HTML
 * section the decisions page and the calibration report show (each passes its own escaping).
 */

import { bandStart } from "../domain/audit/bands.ts";
import type { AutoErrorEstimate } from "../domain/audit/estimate.ts";
import type { PolicyAudit } from "../domain/audit/policy-audit.ts";
import type { BudgetVerdict, LabelsToSettle } from "../domain/audit/verdict.ts";
import { AUDIT } from "../domain/topology.ts";
import { pct } from "./report-style.ts";

/** "1.8% (95% interval 0.9% to 3.4%; 212 audit labels, 4 wrong)", or why there is no figure. */
export function estimateText(e: AutoErrorEstimate): string {
  if (e.labelled === 0)
    return e.samples === 0
      ? "no audit sample yet"
      : `no audit label yet (${waitingText(e.samples, e.awaitingSecondReviewer ?? 0)})`;
  const coverage = e.covered < 1 ? `; covers ${pct(e.covered)} of automatic decisions` : "";
  return `${pct(e.rate)} (${Math.round(e.confidence * 100)}% interval ${pct(e.interval[0])} to ${pct(e.interval[1])}; ${e.labelled} audit labels, ${e.wrong} wrong${coverage})`;
}

/** "42 drawn, waiting for review", or which of them wait for a second reviewer. */
function waitingText(drawn: number, second: number): string {
  if (second === 0) return `${drawn} drawn, waiting for review`;
  if (second === drawn) return `${drawn} drawn, labelled once, waiting for a second reviewer`;
  return `${drawn} drawn: ${drawn - second} waiting for review, ${second} for a second reviewer`;
}

/** Whether the audit shows the policy over its error budget, with evidence (the interval's lower end). */
export function overBudget(audit: PolicyAudit): boolean {
  return audit.verdict?.state === "over_budget";
}

/** "v2 band <0.95" for a stratum key "2|<0.95". */
const stratumText = (stratum: string) => {
  const [version, band] = stratum.split("|");
  return `v${version} band ${band}`;
};

/** What would settle a verdict that needs more labels, in words. */
function settleText(verdict: BudgetVerdict): string {
  const more = (verdict.toSettle ?? []).filter((s) => s.more > 0);
  if (more.length === 0)
    return "the rate is too near the budget for audits alone to settle soon (32 times the labels would not)";
  const total = more.reduce((sum, s) => sum + s.more, 0);
  const order = (s: LabelsToSettle) => {
    const [version, band] = s.stratum.split("|") as [string, string];
    return Number(version) * 10 + bandStart(band);
  };
  const each = [...more]
    .sort((a, b) => order(a) - order(b))
    .map((s) => `${s.more.toLocaleString("en-US")} in ${stratumText(s.stratum)}`);
  return `at the rates seen, about ${total.toLocaleString("en-US")} more audit labels would settle it (${each.join(", ")})`;
}

/** The verdict against the budget (three states, each with its evidence), when the policy has one (`budgetOf`). */
export function budgetText(audit: PolicyAudit): string | undefined {
  const v = audit.verdict;
  if (audit.target === undefined || v === undefined) return undefined;
  const level = `${Math.round(audit.overall.confidence * 100)}%`;
  const budget =
    audit.targetSource === "certificate"
      ? `its certificate's ${pct(v.budget)} (the current version's audit samples alone)`
      : `maxAutoError ${pct(v.budget)}`;
  const speaks = `audit labels speak for ${pct(v.covered)} of automatic decisions`;
  switch (v.state) {
    case "over_budget":
      return `OVER BUDGET: at least ${pct(v.lower)} wrong (lower end of the ${level} interval) is above ${budget}; a policy exactly at its budget is called over in at most ${pct(v.falseAlarm)} of windows`;
    case "within_budget":
      return `within budget: at most ${pct(v.upper)} wrong (upper end of the ${level} interval${v.overdue ? `, ${v.overdue} overdue unlabelled samples read as wrong` : ""}) is within ${budget}; ${speaks}`;
    case "not_enough_labels":
      return `NOT ENOUGH AUDIT LABELS to judge ${budget}: the rate lies between ${pct(v.lower)} and ${pct(v.upper)} (${level}, decisions no label speaks for and overdue samples read at both extremes); ${speaks}; ${settleText(v)}`;
  }
}

/** Samples drawn and not labelled, when there are any: they bias the estimate if skipped for being hard. */
function unansweredText(audit: PolicyAudit): string | undefined {
  const unanswered = audit.overall.samples - audit.overall.labelled;
  if (unanswered <= 0) return undefined;
  const overdue = audit.verdict?.overdue;
  return `${unanswered} audit samples drawn and not labelled${overdue ? `, ${overdue} of them for over ${AUDIT.overdueAfterHours} hours (read as wrong when judging "within budget")` : ""}: the estimate assumes they are like the labelled ones of their band; label them`;
}

/** What `decide audit` prints for one policy. */
export function auditLines(audit: PolicyAudit): string[] {
  const lines = [
    `${audit.policyId}: wrong automatic actions since ${audit.since.slice(0, 10)}: ${estimateText(audit.overall)}`,
  ];
  const budget = budgetText(audit);
  if (budget) lines.push(`  ${budget}`);
  const unanswered = unansweredText(audit);
  if (unanswered) lines.push(`  ${unanswered}`);
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
      `<tr><td data-label="policy"><span class="id">${esc(a.policyId)}</span></td><td data-label="chosen">all</td><td data-label="estimate">${esc(estimateText(a.overall))}</td><td data-label="error budget">${esc(budgetText(a) ?? "no budget set")}</td></tr>`,
      ...a.byOption.map(
        (o) =>
          `<tr><td data-label="policy"><span class="id">${esc(a.policyId)}</span></td><td data-label="chosen">${esc(o.option)}</td><td data-label="estimate">${esc(estimateText(o.estimate))}</td><td data-label="error budget"></td></tr>`,
      ),
    ])
    .join("");
  const notes = audits.flatMap((a) => a.notes.map((n) => `<li>${esc(`${a.policyId}: ${n}`)}</li>`));
  return `<section id="live-audit" aria-labelledby="live-audit-title"><h2 id="live-audit-title">Wrong automatic actions (live audits)</h2>
<p>Estimated from audit samples only (stratified by confidence band, weighted by the inverse of each sample's chance of being drawn); labels on items escalated for other reasons are left out.</p>
<table class="stack" id="live-audit-table"><thead><tr><th scope="col">policy</th><th scope="col">chosen</th><th scope="col">estimate</th><th scope="col">error budget</th></tr></thead><tbody>${rows}</tbody></table>${notes.length ? `<ul class="notes">${notes.join("")}</ul>` : ""}</section>`;
}
