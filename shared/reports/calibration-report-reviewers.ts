/**
 * The calibration report's reviewer section: each reviewer's accuracy measured on gold items
 * (count and 95% interval), how the certificate treats label error, and what the target needs of
 * reviewers (`reviewer-plan.ts`). A certificate counts wrong labels as the model's errors, so the
 * labels' own quality belongs on the page that proposes it.
 */

import { reviewerPlanLines } from "../domain/calibration/certificate/reviewer-plan.ts";
import type { ReviewerAccuracy } from "../domain/review/review-gold.ts";
import { escapeHtml, pct } from "./report-style.ts";

/** Gold answers pooled over reviewers: the accuracy the plan lines use (none without answers). */
function pooled(reviewers: readonly ReviewerAccuracy[]): number | undefined {
  const answered = reviewers.reduce((n, r) => n + r.answered, 0);
  return answered ? reviewers.reduce((n, r) => n + r.right, 0) / answered : undefined;
}

/**
 * The section: a table of reviewers (none yet: how to load gold items), and the plan's lines on
 * reviewers at the certificate's target `maxError` when there is one.
 */
export function reviewersSectionHtml(reviewers: readonly ReviewerAccuracy[], maxError?: number): string {
  const rows = reviewers
    .map(
      (r) =>
        `<tr><th scope="row">${escapeHtml(r.reviewerName)}</th><td>${r.right} of ${r.answered}</td><td>${pct(r.accuracy)}</td><td>${pct(r.interval[0])} to ${pct(r.interval[1])}</td></tr>`,
    )
    .join("");
  const table = rows
    ? `<table id="reviewer-accuracy"><caption>Accuracy per reviewer on gold items (known answers, mixed into the queue unmarked)</caption><thead><tr><td></td><th scope="col">right</th><th scope="col">accuracy</th><th scope="col">95% interval (Wilson)</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p>No gold item has been answered yet: load some with <code>decide review gold --file gold.jsonl</code> to measure each reviewer.</p>`;
  const plan = maxError === undefined ? [] : reviewerPlanLines(maxError, pooled(reviewers));
  return `<h2 id="reviewers">Reviewers</h2>
${table}
<p>The certificate counts every label that differs from the model's answer as the model's error and does not correct for label error: a reviewer wrong on a right answer makes the bound stricter; one who agrees with a wrong answer hides an error. Gold labels never count as the model's evidence.</p>
${plan.length ? `<ul>${plan.map((l) => `<li>${escapeHtml(l)}</li>`).join("")}</ul>` : ""}`;
}
