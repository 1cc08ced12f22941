/**
 * The decisions view: every decision, newest first, filtered by policy, route and date, each with
 * its reason and a detail row (the item's fields, hashes, latency, label) that spans the table so
 * that opening it never pushes columns off-screen. Invalid filters answer 422 with a message.
 */
import { auditSectionHtml } from "../domain/audit/audit-text.ts";
import type { PolicyAudit } from "../domain/audit/policy-audit.ts";
import { BATCH_ID_PATTERN } from "../domain/batch.ts";
import { type DecisionRecord, RECORD_STATUSES } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { ROUTES } from "../domain/routing.ts";
import { html, stateFields } from "./layout.ts";
import { reasonText } from "./review-views.ts";

/** At most this many rows are shown; the heading says when there were more. */
const MAX_ROWS = 500;

/** The filters, validated: `problems` lists what was wrong, field by field. */
export function decisionFilters(
  query: {
    policy?: string | undefined;
    route?: string | undefined;
    since?: string | undefined;
    batch?: string | undefined;
  },
  policies: PolicyRegistry,
): { policy: string; route: string; since: string; batch: string; sinceIso?: string; problems: string[] } {
  const policy = query.policy ?? "";
  const batch = (query.batch ?? "").trim();
  const route = query.route ?? "";
  const since = query.since ?? "";
  const problems: string[] = [];
  if (policy && !policies.ids().includes(policy))
    problems.push(`policy: "${policy}" is not a policy (${policies.ids().join(", ")})`);
  if (route && !(ROUTES as readonly string[]).includes(route))
    problems.push(`route: "${route}" is not one of ${ROUTES.join(", ")}`);
  if (batch && !BATCH_ID_PATTERN.test(batch))
    problems.push(`batch: "${batch}" is not a batch id (b- and 6 to 60 lowercase letters, digits or dashes)`);
  let sinceIso: string | undefined;
  if (since) {
    const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/.test(since) ? Date.parse(since) : Number.NaN;
    if (Number.isNaN(time)) problems.push(`since: "${since}" is not a date (YYYY-MM-DD)`);
    else sinceIso = new Date(time).toISOString();
  }
  return { policy, route, since, batch, problems, ...(sinceIso ? { sinceIso } : {}) };
}

/** The decisions matching valid filters, newest first. */
export async function matchingDecisions(
  store: DecisionStore,
  filters: { policy: string; route: string; batch?: string; sinceIso?: string },
): Promise<DecisionRecord[]> {
  const since = filters.sinceIso ?? "1970-01-01T00:00:00.000Z";
  return (await Promise.all(RECORD_STATUSES.map((s) => store.listSince(s, since))))
    .flat()
    .filter(
      (r) =>
        (!filters.policy || r.policyId === filters.policy) &&
        (!filters.route || r.route === filters.route) &&
        (!filters.batch || r.batchId === filters.batch),
    )
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * The view's body: the filter form, any problems, the live audit estimate of the policies shown
 * (`audits`, when given) and the table.
 */
export function decisionsBody(
  records: readonly DecisionRecord[],
  filters: { policy: string; route: string; since: string; batch?: string; problems: string[] },
  policies: PolicyRegistry,
  audits: readonly PolicyAudit[] = [],
): string {
  const options = (values: readonly string[], selected: string) =>
    [
      '<option value="">any</option>',
      ...values.map((v) => `<option${v === selected ? " selected" : ""}>${html(v)}</option>`),
    ].join("");
  const form = `<form method="get" aria-label="Filters"><label>Policy <select name="policy">${options(policies.ids(), filters.policy)}</select></label>
<label>Route <select name="route">${options(ROUTES, filters.route)}</select></label>
<label>Since <input type="date" name="since" value="${html(filters.since)}"></label>
<label>Batch <input name="batch" placeholder="b-…" value="${html(filters.batch ?? "")}"></label> <button type="submit">Filter</button></form>`;
  if (filters.problems.length)
    return `<h1>Decisions</h1>${form}<div class="error" role="alert"><p>These filters cannot be used:</p><ul>${filters.problems.map((p) => `<li>${html(p)}</li>`).join("")}</ul></div>`;
  const shown = records.slice(0, MAX_ROWS);
  const rows = shown
    .map((r, i) => {
      const policy = policies.version(r.policyId, r.policyVersion);
      return `<tr><td>${html(r.itemId)}</td><td>${html(r.policyId)} v${r.policyVersion}</td><td>${html(r.status)}</td><td>${html(r.route ?? "-")}</td>
<td>${html(r.chosen ?? "-")}</td><td>${r.topProbability === undefined ? "-" : `${(r.topProbability * 100).toFixed(1)}%`}</td>
<td>${r.reason ? reasonText(r, policy) : html(r.problems?.map((p) => `${p.field}: ${p.message}`).join("; ") ?? "-")}</td><td>${html(r.createdAt.slice(0, 19).replace("T", " "))}</td></tr>
<tr class="detail"><td colspan="8"><details><summary>Details of ${html(r.itemId)}</summary>${stateFields(r.state)}<dl class="fields" id="detail-${i}">
<dt>label</dt><dd>${html(r.label ?? "-")}${r.reviewer ? ` by ${html(r.reviewer)}` : ""}</dd><dt>latency</dt><dd>${html(r.latencyMs ?? "-")} ms</dd>
<dt>prompt SHA-256</dt><dd><code>${html(r.promptSha256 ?? "-")}</code></dd><dt>model SHA-256</dt><dd><code>${html(r.modelSha256 ?? "-")}</code></dd></dl></details></td></tr>`;
    })
    .join("");
  const more = records.length > shown.length ? ` (newest ${shown.length} shown)` : "";
  const audit = audits.length ? auditSectionHtml(audits, html) : "";
  return `<h1>Decisions (${records.length})${more}</h1>${form}${audit}<table><caption>Newest first</caption><colgroup><col style="width:14%"><col style="width:12%"><col style="width:10%"><col style="width:7%"><col style="width:10%"><col style="width:8%"><col style="width:27%"><col style="width:12%"></colgroup>
<thead><tr><th scope="col">item</th><th scope="col">policy</th><th scope="col">status</th><th scope="col">route</th><th scope="col">chosen</th><th scope="col">top</th><th scope="col">reason</th><th scope="col">decided</th></tr></thead><tbody>${rows}</tbody></table>`;
}
