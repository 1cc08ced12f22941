/**
 * The calibration report's cascade section: the pair of thresholds certified together over both
 * models, the second model's fit, and the front (items per 1,000 sent to people at each certified
 * target, the first model alone against the cascade, on the same labels).
 */
import { type CascadeCalibration, cascadeSentence } from "../domain/calibration/cascade-calibration.ts";
import { escapeHtml, pct } from "./report-style.ts";

const people = (n: number | null) => (n === null ? "none certified" : String(n));

/** The section's HTML. */
export function cascadeSectionHtml(c: CascadeCalibration): string {
  const r = c.result;
  const rows = c.front
    .map(
      (p) =>
        `<tr><th scope="row">${pct(p.maxError)}</th><td>${people(p.firstAlone)}</td><td>${people(p.cascade)}</td></tr>`,
    )
    .join("");
  const byTier = r.thresholds
    ? `Of the labelled items it automates, ${r.byTier[0]} are the first model's and ${r.byTier[1]} ${escapeHtml(c.model)}'s.`
    : "";
  const notes = c.notes.length
    ? `<ul class="notes">${c.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
    : "";
  return `<h2>Proposed thresholds: the first model, then ${escapeHtml(c.model)}, then people</h2>
<p id="cascade"><strong>${escapeHtml(cascadeSentence(c))}</strong>. Method: Learn then Test over a fixed grid of threshold pairs, walked from the strictest pair in an order set before any label is read; each item is judged by the model that acts on it. ${byTier}</p>
<p id="cascade-fit">${escapeHtml(c.model)} answered ${c.secondLabels} labelled items (those the first model passed on); its calibration: ${escapeHtml(c.fit)} (temperature ${c.temperature}).</p>
${notes}
<table id="front"><caption>The front at ${pct(r.confidence)} confidence: items per 1,000 sent to people at each certified target of wrong automatic actions</caption><thead><tr><th scope="col">target</th><th scope="col">first model alone</th><th scope="col">cascade</th></tr></thead><tbody>${rows}</tbody></table>`;
}
