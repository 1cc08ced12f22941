/**
 * The decisions view: decisions newest first, a page at a time through a time window (since and
 * until), filtered by policy, route and batch in the query itself, each with its reason and a
 * detail row (the item's fields, hashes, latency, label) that spans the table so that opening it
 * never pushes columns off-screen. A page reads a bounded number of index entries whatever the
 * table holds, the first page as every other; a filter that matches rarely may give a short
 * page with a link to older ones. The live error rate from audits of the policies shown is a
 * page of its own (/decisions/audit, linked from every page): estimating it reads every audit
 * sample of the window, waiting ones included, which the first page once did on each visit
 * (23 s with about 1,900 items waiting). Invalid filters answer 422 with a message.
 */

import { BATCH_ID_PATTERN } from "../domain/batch.ts";
import { decidingModel, modelInWords } from "../domain/deciding-model.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionPage, DecisionStore } from "../domain/decision-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import type { Reviewer } from "../domain/review/review.ts";
import { countHandling, handlingOf, handlingText, ROUTES, type Route } from "../domain/routing.ts";
import { DECISIONS_VIEW } from "../domain/topology.ts";
import { auditSectionHtml } from "../reports/audit-text.ts";
import { estimateAutoErrors, windowStart } from "../use-cases/audit-estimate.ts";
import { html, stateFields } from "./layout.ts";
import { itemPath, reasonText } from "./review-views.ts";

/** The view's filters as the query string gave them, and what they mean once checked. */
export interface DecisionFilters {
  readonly policy: string;
  readonly route: string;
  readonly since: string;
  readonly until: string;
  readonly batch: string;
  readonly sinceIso?: string;
  /** The end of the window (exclusive): the day after a date given, or the time given. */
  readonly untilIso?: string;
  readonly problems: string[];
}

/** A date (the day's start) or an ISO time, as epoch ms; NaN when it is neither. */
function parseTime(value: string, dayEnd: boolean): number {
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/.test(value)) return Number.NaN;
  const time = Date.parse(value);
  return dayEnd && value.length === 10 ? time + 86_400_000 : time;
}

/** The filters, validated: `problems` lists what was wrong, field by field. */
export function decisionFilters(
  query: {
    policy?: string | undefined;
    route?: string | undefined;
    since?: string | undefined;
    until?: string | undefined;
    batch?: string | undefined;
  },
  policies: PolicyRegistry,
): DecisionFilters {
  const policy = query.policy ?? "";
  const batch = (query.batch ?? "").trim();
  const route = query.route ?? "";
  const since = query.since ?? "";
  const until = query.until ?? "";
  const problems: string[] = [];
  if (policy && !policies.ids().includes(policy))
    problems.push(`policy: "${policy}" is not a policy (${policies.ids().join(", ")})`);
  if (route && !(ROUTES as readonly string[]).includes(route))
    problems.push(`route: "${route}" is not one of ${ROUTES.join(", ")}`);
  if (batch && !BATCH_ID_PATTERN.test(batch))
    problems.push(`batch: "${batch}" is not a batch id (b- and 6 to 60 lowercase letters, digits or dashes)`);
  const times: { sinceIso?: string; untilIso?: string } = {};
  for (const [name, value, dayEnd] of [
    ["since", since, false],
    ["until", until, true],
  ] as const) {
    if (!value) continue;
    const time = parseTime(value, dayEnd);
    if (Number.isNaN(time)) problems.push(`${name}: "${value}" is not a date (YYYY-MM-DD)`);
    else times[name === "since" ? "sinceIso" : "untilIso"] = new Date(time).toISOString();
  }
  if (times.sinceIso && times.untilIso && times.sinceIso >= times.untilIso)
    problems.push(`until: "${until}" is not after since "${since}"`);
  return { policy, route, since, until, batch, problems, ...times };
}

/** One page of the decisions matching valid filters, newest first, from `cursor`. */
export function pageOfDecisions(
  store: DecisionStore,
  filters: DecisionFilters,
  policies: PolicyRegistry,
  options: { now: Date; cursor?: string },
): Promise<DecisionPage> {
  return store.pageDecisions(
    {
      since: filters.sinceIso ?? "1970-01-01T00:00:00.000Z",
      until: filters.untilIso ?? new Date(options.now.getTime() + 1).toISOString(),
      policyIds: policies.ids(),
      ...(filters.policy ? { policyId: filters.policy } : {}),
      ...(filters.route ? { route: filters.route as Route } : {}),
      ...(filters.batch ? { batchId: filters.batch } : {}),
    },
    { limit: DECISIONS_VIEW.pageSize, ...(options.cursor ? { cursor: options.cursor } : {}) },
  );
}

/** The view's address with the same filters: its first page, or the page after `next`. */
function pageLink(filters: DecisionFilters, next?: string): string {
  const query = new URLSearchParams();
  for (const name of ["policy", "route", "since", "until", "batch"] as const)
    if (filters[name]) query.set(name, filters[name]);
  if (next) query.set("cursor", next);
  return `/decisions?${query.toString()}`;
}

/** The audit page's address for the same policy and date. */
function auditLink(filters: DecisionFilters): string {
  const query = new URLSearchParams();
  for (const name of ["policy", "since"] as const) if (filters[name]) query.set(name, filters[name]);
  return `/decisions/audit?${query.toString()}`;
}

/**
 * The view's body: the filter form, any problems, the link to the live error rate and the table.
 * `viewer` decides what a reason names: certification samples are named only to an admin.
 */
export function decisionsBody(
  page: { records: readonly DecisionRecord[]; next?: string; continued: boolean },
  filters: DecisionFilters,
  policies: PolicyRegistry,
  viewer?: Reviewer,
): string {
  const options = (values: readonly string[], selected: string) =>
    [
      '<option value="">any</option>',
      ...values.map((v) => `<option${v === selected ? " selected" : ""}>${html(v)}</option>`),
    ].join("");
  const form = `<form method="get" aria-label="Filters"><label>Policy <select name="policy">${options(policies.ids(), filters.policy)}</select></label>
<label>Route <select name="route">${options(ROUTES, filters.route)}</select></label>
<label>Since <input type="date" name="since" value="${html(filters.since)}"></label>
<label>Until <input type="date" name="until" value="${html(filters.until)}"></label>
<label>Batch <input name="batch" placeholder="b-…" value="${html(filters.batch ?? "")}"></label> <button type="submit">Filter</button></form>`;
  if (filters.problems.length)
    return `<h1>Decisions</h1>${form}<div class="error" role="alert"><p>These filters cannot be used:</p><ul>${filters.problems.map((p) => `<li>${html(p)}</li>`).join("")}</ul></div>`;
  const rows = page.records
    .map((r, i) => {
      const policy = policies.version(r.policyId, r.policyVersion);
      const id = r.status === "rejected" ? html(r.itemId) : `<a href="${itemPath(r)}">${html(r.itemId)}</a>`;
      return `<tr><td data-label="item">${id}</td><td data-label="policy"><span class="id">${html(r.policyId)}</span> v${r.policyVersion}</td><td data-label="status"><span class="id">${html(r.status.replace("_", " "))}</span></td><td data-label="route">${html(r.route ?? "-")}${handlingOf(r) === "audit_sample" ? " (audit sample)" : ""}</td>
<td data-label="chosen">${html(r.chosen ?? "-")}</td><td data-label="top">${r.topProbability === undefined ? "-" : `${(r.topProbability * 100).toFixed(1)}%`}</td>
<td data-label="reason">${r.reason ? reasonText(r, policy, viewer) : html(r.problems?.map((p) => `${p.field}: ${p.message}`).join("; ") ?? "-")}</td><td data-label="decided">${html(r.createdAt.slice(0, 19).replace("T", " "))}</td></tr>
<tr class="detail"><td colspan="8"><details><summary>Details of ${html(r.itemId)}</summary>${stateFields(r.state)}<dl class="fields" id="detail-${i}">
<dt>label</dt><dd>${html(r.label ?? "-")}${r.reviewer ? ` by ${html(r.reviewer)}` : ""}</dd><dt>latency</dt><dd>${html(r.latencyMs ?? "-")} ms</dd>
<dt>prompt SHA-256</dt><dd><code>${html(r.promptSha256 ?? "-")}</code></dd><dt>model</dt><dd>${r.route ? html(modelInWords(decidingModel(r, policy))) : "-"}</dd><dt>model SHA-256</dt><dd><code>${html(r.modelSha256 ?? "-")}</code></dd></dl></details></td></tr>`;
    })
    .join("");
  const pages = `<nav class="pages" aria-label="Pages">${page.continued ? `<a href="${html(pageLink(filters))}">Newest</a>` : ""}${page.next ? `<a href="${html(pageLink(filters, page.next))}" rel="next">Older decisions</a>` : ""}</nav>`;
  const none =
    page.records.length === 0
      ? `<p>No decision on this page matches${page.next ? "; older ones may" : ""}.</p>`
      : "";
  const audit = `<p><a href="${html(auditLink(filters))}">Live error rate from audits</a> of ${filters.policy ? html(filters.policy) : "these policies"}</p>`;
  // Counted as every page counts "automated": audit samples are what the policy acted on, apart.
  const handled = page.records.length
    ? ` On this page: ${html(handlingText(countHandling(page.records)))}.`
    : "";
  return `<h1>Decisions</h1>${form}${audit}<p id="shown">${page.records.length} shown, newest first, ${DECISIONS_VIEW.pageSize} a page.${handled}</p>${none}<table class="stack"><caption>Newest first</caption>
<thead><tr><th scope="col">item</th><th scope="col">policy</th><th scope="col">status</th><th scope="col">route</th><th scope="col">chosen</th><th scope="col">top</th><th scope="col">reason</th><th scope="col">decided</th></tr></thead><tbody>${rows}</tbody></table>${pages}`;
}

/**
 * The view for a request's query: its body, and 422 when a filter or the cursor cannot be used
 * (the problems are listed above an empty table).
 */
export async function decisionsView(
  store: DecisionStore,
  policies: PolicyRegistry,
  query: (name: string) => string | undefined,
  now: Date,
  viewer?: Reviewer,
): Promise<{ body: string; status: 200 | 422 }> {
  const names = ["policy", "route", "since", "until", "batch"] as const;
  const filters = decisionFilters(Object.fromEntries(names.map((n) => [n, query(n)])), policies);
  const cursor = query("cursor");
  if (!filters.problems.length) {
    try {
      const found = await pageOfDecisions(store, filters, policies, { now, ...(cursor ? { cursor } : {}) });
      return {
        status: 200,
        body: decisionsBody({ ...found, continued: Boolean(cursor) }, filters, policies, viewer),
      };
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      filters.problems.push(error.message);
    }
  }
  return { status: 422, body: decisionsBody({ records: [], continued: false }, filters, policies, viewer) };
}

/**
 * The live error rate of the policies shown (one, or all), from the audit samples since the date
 * given (by default over the audit window); 422 for a filter that cannot be used.
 */
export async function auditView(
  store: DecisionStore,
  policies: PolicyRegistry,
  query: (name: string) => string | undefined,
  now: Date,
): Promise<{ body: string; status: 200 | 422 }> {
  const filters = decisionFilters({ policy: query("policy"), since: query("since") }, policies);
  const back = `<p><a href="${html(pageLink(filters))}">Decisions</a></p>`;
  if (filters.problems.length)
    return {
      status: 422,
      body: `<h1>Live error rate</h1>${back}<div class="error" role="alert"><ul>${filters.problems.map((p) => `<li>${html(p)}</li>`).join("")}</ul></div>`,
    };
  const audits = await estimateAutoErrors(
    { store, policies },
    {
      since: filters.sinceIso ?? windowStart(now),
      now,
      ...(filters.policy ? { policyId: filters.policy } : {}),
    },
  );
  return { status: 200, body: `<h1>Live error rate</h1>${back}${auditSectionHtml(audits, html)}` };
}
