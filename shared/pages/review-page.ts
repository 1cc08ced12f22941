/**
 * The review page: the queue of items waiting for a person (item text, a bar per option with its
 * probability, the reason for escalation), answered with a click or a number key, which stores the
 * label and emits "Decision Reviewed"; and a decisions view with filters and each record's detail.
 * Server-rendered HTML that works without scripts; a few lines of script add the shortcuts.
 */
import { Hono } from "hono";
import type { PublishesEvents } from "../adapters/event-publisher.ts";
import { type DecisionRecord, RECORD_STATUSES } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { ReviewError, reviewDecision } from "../use-cases/review-decision.ts";

const html = (text: unknown) =>
  String(text ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
const stateText = (state: unknown) => (typeof state === "string" ? state : JSON.stringify(state, null, 2));

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)}</title><style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #111; }
nav a { margin-right: 1rem; } article { border: 1px solid #ccc; border-radius: 6px; padding: 0.8rem 1rem; margin: 1rem 0; }
article:focus-within { outline: 3px solid #1565c0; } pre { white-space: pre-wrap; background: #f6f6f6; padding: 0.5rem; }
.bar { display: grid; grid-template-columns: 12rem 1fr 4rem; gap: 0.5rem; align-items: center; margin: 0.2rem 0; }
.bar meter { width: 100%; height: 1rem; } button { font: inherit; padding: 0.3rem 0.8rem; margin: 0.2rem 0.3rem 0 0; cursor: pointer; }
table { border-collapse: collapse; width: 100%; } th, td { border: 1px solid #ccc; padding: 0.3rem 0.5rem; text-align: left; }
.reason { color: #8a4b00; } .flash { background: #e8f5e9; padding: 0.5rem; } .error { background: #ffebee; padding: 0.5rem; }
</style></head><body><nav aria-label="Main"><a href="/">Review queue</a><a href="/decisions">Decisions</a></nav><main>${body}</main>
<script>
// Number keys answer the focused item (or the first one): 1 picks its first option, 2 the second...
document.addEventListener("keydown", (event) => {
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
  const n = Number(event.key);
  if (!Number.isInteger(n) || n < 1 || n > 9) return;
  const item = document.activeElement?.closest("article") ?? document.querySelector("article");
  const button = item?.querySelectorAll("button[name=label]")[n - 1];
  if (button) { event.preventDefault(); button.click(); }
});
</script></body></html>`;
}

function reviewCard(record: DecisionRecord, policies: PolicyRegistry, index: number): string {
  const policy = policies.version(record.policyId, record.policyVersion);
  const options =
    policy?.options ?? Object.keys(record.distribution ?? {}).map((id) => ({ id, description: id }));
  const bars = options
    .map((o, i) => {
      const p = record.distribution?.[o.id] ?? 0;
      return `<div class="bar"><span id="opt-${index}-${i}">${i + 1}. ${html(o.description)}</span>
<meter min="0" max="1" value="${p}" aria-labelledby="opt-${index}-${i}">${(p * 100).toFixed(0)}%</meter><span>${(p * 100).toFixed(1)}%</span></div>`;
    })
    .join("");
  const buttons = options
    .map(
      (o, i) =>
        `<button type="submit" name="label" value="${html(o.id)}" aria-keyshortcuts="${i + 1}">${i + 1}. ${html(o.id)}</button>`,
    )
    .join("");
  return `<article aria-labelledby="item-${index}" data-item="${html(record.itemId)}">
<h2 id="item-${index}">${html(record.itemId)} <small>${html(record.policyId)} v${record.policyVersion}</small></h2>
<p class="reason">Escalated: ${html(record.reason)}; the model chose <strong>${html(record.chosen)}</strong>.</p>
<pre>${html(stateText(record.state))}</pre>${bars}
<form method="post" action="/reviews"><input type="hidden" name="itemId" value="${html(record.itemId)}">
<input type="hidden" name="policyId" value="${html(record.policyId)}"><input type="hidden" name="policyVersion" value="${record.policyVersion}">
<label>Reviewer <input name="reviewer" value="reviewer" required></label><div role="group" aria-label="Answer">${buttons}</div></form></article>`;
}

/** The review page's routes. */
export function createReviewApp(deps: {
  store: DecisionStore;
  publisher: PublishesEvents;
  policies: PolicyRegistry;
}): Hono {
  const app = new Hono();

  app.get("/", async (c) => {
    const pending = await deps.store.listByStatus("pending_review", 50);
    const flash = c.req.query("stored")
      ? `<p class="flash" role="status">Stored ${html(c.req.query("stored"))}.</p>`
      : "";
    const error = c.req.query("error")
      ? `<p class="error" role="alert">${html(c.req.query("error"))}</p>`
      : "";
    const body = pending.length
      ? pending.map((r, i) => reviewCard(r, deps.policies, i)).join("")
      : "<p>Nothing waits for review.</p>";
    return c.html(
      page(
        "Review queue",
        `<h1>Review queue (${pending.length})</h1>${flash}${error}<p>Answer with the buttons or the number keys.</p>${body}`,
      ),
    );
  });

  app.post("/reviews", async (c) => {
    const form = await c.req.parseBody();
    const input = {
      itemId: String(form.itemId ?? ""),
      policyId: String(form.policyId ?? ""),
      policyVersion: Number(form.policyVersion),
      label: String(form.label ?? ""),
      reviewer: String(form.reviewer ?? ""),
    };
    try {
      await reviewDecision(input, deps);
      return c.redirect(`/?stored=${encodeURIComponent(`${input.itemId}: ${input.label}`)}`, 303);
    } catch (e) {
      if (e instanceof ReviewError) return c.redirect(`/?error=${encodeURIComponent(e.message)}`, 303);
      throw e;
    }
  });

  app.get("/decisions", async (c) => {
    const policy = c.req.query("policy") ?? "";
    const route = c.req.query("route") ?? "";
    const since = c.req.query("since") ?? "";
    const all = (
      await Promise.all(
        RECORD_STATUSES.map((s) =>
          deps.store.listSince(s, since ? new Date(since).toISOString() : "1970-01-01T00:00:00.000Z"),
        ),
      )
    )
      .flat()
      .filter((r) => (!policy || r.policyId === policy) && (!route || r.route === route))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const options = (values: string[], selected: string) =>
      [
        '<option value="">any</option>',
        ...values.map((v) => `<option${v === selected ? " selected" : ""}>${html(v)}</option>`),
      ].join("");
    const rows = all
      .map(
        (r) => `<tr><td><details><summary>${html(r.itemId)}</summary><dl>
<dt>prompt SHA-256</dt><dd><code>${html(r.promptSha256)}</code></dd><dt>model SHA-256</dt><dd><code>${html(r.modelSha256)}</code></dd>
<dt>latency</dt><dd>${html(r.latencyMs)} ms</dd><dt>label</dt><dd>${html(r.label ?? "-")}</dd></dl></details></td>
<td>${html(r.policyId)} v${r.policyVersion}</td><td>${html(r.status)}</td><td>${html(r.route ?? "-")}</td><td>${html(r.chosen ?? "-")}</td>
<td>${r.topProbability === undefined ? "-" : `${(r.topProbability * 100).toFixed(1)}%`}</td><td>${html(r.createdAt)}</td></tr>`,
      )
      .join("");
    const form = `<form method="get" aria-label="Filters"><label>Policy <select name="policy">${options(deps.policies.ids(), policy)}</select></label>
<label>Route <select name="route">${options(["auto", "human"], route)}</select></label>
<label>Since <input type="date" name="since" value="${html(since)}"></label> <button type="submit">Filter</button></form>`;
    return c.html(
      page(
        "Decisions",
        `<h1>Decisions (${all.length})</h1>${form}<table><caption>Newest first</caption><thead><tr><th scope="col">item</th><th scope="col">policy</th><th scope="col">status</th><th scope="col">route</th><th scope="col">chosen</th><th scope="col">top probability</th><th scope="col">decided</th></tr></thead><tbody>${rows}</tbody></table>`,
      ),
    );
  });
  return app;
}
