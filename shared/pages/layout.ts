/**
 * The review pages' shell: escaping, the page frame (navigation, who is signed in), the styles
 * (usable from phone to laptop width) and the small script that adds keyboard use. Server-rendered
 * HTML that works without scripts.
 */
import type { Reviewer } from "../domain/review/review.ts";
import { REVIEW } from "../domain/topology.ts";

/** Escapes text for HTML. */
export const html = (text: unknown): string =>
  String(text ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

const STYLE = `
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 0.75rem; color: #111; }
header { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: baseline; justify-content: space-between; border-bottom: 1px solid #ddd; padding-bottom: 0.4rem; }
nav a { margin-right: 1rem; }
article { border: 1px solid #ccc; border-radius: 6px; padding: 0.8rem 1rem; margin: 1rem 0; }
article:focus, article:focus-within { outline: 3px solid #1565c0; }
dl.fields { display: grid; grid-template-columns: minmax(6rem, max-content) 1fr; gap: 0.2rem 1rem; background: #f6f6f6; padding: 0.6rem; border-radius: 4px; overflow-wrap: anywhere; }
dl.fields dt { font-weight: 600; } dl.fields dd { margin: 0; }
p.text { background: #f6f6f6; padding: 0.6rem; border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; }
.bar { display: grid; grid-template-columns: minmax(8rem, 18rem) 1fr 4rem; gap: 0.5rem; align-items: center; margin: 0.2rem 0; padding: 0.1rem 0.3rem; }
.bar.chosen { background: #fff3e0; font-weight: 600; border-radius: 4px; }
.bar meter { width: 100%; height: 1rem; }
button { font: inherit; padding: 0.35rem 0.8rem; margin: 0.2rem 0.3rem 0 0; cursor: pointer; }
button[aria-pressed="true"] { outline: 3px solid #e65100; }
.answers { display: flex; flex-wrap: wrap; gap: 0.2rem; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; overflow-wrap: break-word; word-break: normal; hyphens: none; }
td > a, .id { white-space: nowrap; }
.excerpt { color: #444; font-size: 0.9em; margin-top: 0.2rem; }
tr.detail td { background: #fafafa; }
.reason { color: #8a4b00; } .flash { background: #e8f5e9; padding: 0.5rem; } .error { background: #ffebee; padding: 0.5rem; }
.badge { display: inline-block; max-width: 100%; border-radius: 3px; padding: 0 0.35rem; font-size: 0.85em; background: #eceff1; }
.taken { color: #555; font-style: italic; }
.toast { background: #263238; color: #fff; padding: 0.6rem 0.8rem; border-radius: 6px; display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; margin: 0.5rem 0; }
.toast button { margin: 0; } .toast form { margin: 0; } .toast a.dismiss { color: #fff; margin-left: auto; }
form.claim, form.start { margin: 0.5rem 0; } .held { color: #1b5e20; font-weight: 600; }
.confirm { font-weight: 600; color: #e65100; min-height: 1.4em; }
.pages { display: flex; gap: 1rem; margin: 1rem 0; }
@media (max-width: 40rem) {
  .bar { grid-template-columns: 1fr 3.5rem; } .bar meter { grid-column: 1 / -1; grid-row: 2; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead { display: none; } table.stack caption { display: block; text-align: left; }
  table.stack tr { border: 1px solid #ccc; border-radius: 4px; margin: 0 0 0.6rem; }
  table.stack td { border: 0; border-bottom: 1px solid #eee; }
  table.stack td[data-label]::before { content: attr(data-label); display: block; font-size: 0.8em; color: #555; }
}
`;

// Number keys act only inside the focused item: the key selects an answer, Enter confirms it,
// Escape cancels. Nothing happens when no item has focus, so a stray key cannot label anything.
const SCRIPT = `
let armed;
document.addEventListener("keydown", (event) => {
  const item = document.activeElement?.closest?.("article[data-item]");
  if (!item || event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
  const note = item.querySelector(".confirm");
  if (event.key === "Escape" && armed) { armed.setAttribute("aria-pressed", "false"); armed = undefined; if (note) note.textContent = ""; return; }
  if (event.key === "Enter" && armed && item.contains(armed)) {
    event.preventDefault();
    const next = armed.form?.querySelector("input[name=then]");
    if (next) next.checked = !event.shiftKey;
    armed.click();
    return;
  }
  const n = Number(event.key);
  if (!Number.isInteger(n) || n < 1 || n > 9) return;
  const button = item.querySelectorAll("button[name=label]:not([disabled])")[n - 1];
  if (!button) return;
  event.preventDefault();
  if (armed) armed.setAttribute("aria-pressed", "false");
  armed = button;
  button.setAttribute("aria-pressed", "true");
  if (note) note.textContent = "Press Enter to answer \\u201c" + button.dataset.description + "\\u201d, Escape to cancel.";
});
document.querySelector("article[data-item][data-autofocus]")?.focus();
for (const link of document.querySelectorAll(".toast a.dismiss"))
  link.addEventListener("click", (event) => { event.preventDefault(); link.closest(".toast")?.remove(); });
// Signed in: renew the short-lived session before it expires, while the page is open; once the
// refresh token is refused (the session's hours are over, or it was revoked), sign in again.
if (document.querySelector('a[href="/auth/logout"]'))
  setInterval(async () => {
    const answer = await fetch("/auth/refresh", { method: "POST", credentials: "same-origin" }).catch(() => undefined);
    if (answer?.status === 401) location.assign("/auth/login");
  }, ${(REVIEW.tokenMinutes - 3) * 60_000});
`;

// An inline icon: the browser asks for no /favicon.ico, so no page logs a 404 for it.
const ICON = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1565c0"/><path d="M4 8l3 3 5-6" stroke="#fff" stroke-width="2" fill="none"/></svg>')}`;

/** A whole page: navigation, who is signed in, the body. */
export function page(title: string, body: string, reviewer?: Reviewer): string {
  const who = reviewer
    ? `<p>Signed in as <strong>${html(reviewer.name)}</strong> <span class="badge">${html(reviewer.groups.join(", ") || "no group")}</span> <a href="/auth/logout">Sign out</a></p>`
    : "";
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)}</title><link rel="icon" href="${ICON}"><style>${STYLE}</style></head><body><header><nav aria-label="Main"><a href="/">Review queue</a><a href="/decisions">Decisions</a></nav>${who}</header>
<main>${body}</main><script>${SCRIPT}</script></body></html>`;
}

/** An item's state as readable fields: text as a paragraph, an object as a list of fields. */
export function stateFields(state: unknown): string {
  if (typeof state === "string") return `<p class="text">${html(state)}</p>`;
  if (!state || typeof state !== "object" || Array.isArray(state))
    return `<p class="text">${html(JSON.stringify(state))}</p>`;
  const value = (v: unknown): string => {
    if (v === "" || (Array.isArray(v) && v.length === 0)) return "<em>(empty)</em>";
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return html(v);
    if (Array.isArray(v) && v.every((x) => typeof x !== "object")) return html(v.join(", "));
    return `<code>${html(JSON.stringify(v))}</code>`;
  };
  const rows = Object.entries(state as Record<string, unknown>)
    .map(([key, v]) => `<dt>${html(key)}</dt><dd>${value(v)}</dd>`)
    .join("");
  return `<dl class="fields">${rows}</dl>`;
}

/** "3 h 12 min", "4 min", "20 s": how long ago `iso` was, at `now`. */
export function waited(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}
