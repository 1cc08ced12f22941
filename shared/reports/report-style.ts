/**
 * The look of the tool's HTML reports (the calibration report, the what-if report): the page
 * style, escaping, and how numbers and shares are written. One place, so the reports match.
 */

/** Escapes text for HTML. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** A share as a percentage with one decimal ("n/a" when not finite). */
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : "n/a");

/** A number with `digits` decimals ("n/a" when not finite). */
export const num = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : "n/a");

/**
 * The reports' style sheet (inline in each page: the reports are single self-contained files).
 * On a phone (390 px) nothing is wider than the screen: cells wrap, plots scale down.
 */
export const REPORT_STYLE = `body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #111; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; } th, td { border: 1px solid #ccc; padding: 0.3rem 0.6rem; text-align: right; }
th[scope="row"] { text-align: left; } caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
.plots { display: flex; flex-wrap: wrap; gap: 1.5rem; } figure { margin: 0; } svg text { font-size: 11px; }
.notes { background: #fff8e1; border-left: 4px solid #f9a825; padding: 0.5rem 1.5rem; }
table { max-width: 100%; } th, td { overflow-wrap: anywhere; } svg { max-width: 100%; height: auto; }
@media (max-width: 40rem) {
  body { margin: 1rem auto; padding: 0 0.5rem; font-size: 14px; }
  th, td { padding: 0.2rem 0.3rem; font-size: 0.85em; } .notes { padding: 0.5rem 0.8rem; }
}
`;
