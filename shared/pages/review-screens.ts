/**
 * The review pages' two screens and their toast: the queue (with "Start reviewing", which claims
 * the oldest item you may answer) and the item page, which only shows: opening it claims nothing.
 * Claims are explicit POSTs (shared/pages/review-posts.ts and review-page.ts).
 */
import type { Context } from "hono";
import type { RecordKey } from "../domain/decision-store.ts";
import { answerability, isAdmin } from "../domain/review/review.ts";
import { REVIEW } from "../domain/topology.ts";
import { viewedBy } from "../use-cases/review/gold-items.ts";
import { loadRecord, nowOf } from "../use-cases/review/review-common.ts";
import { mayRevise } from "../use-cases/review/review-decision.ts";
import { html, page } from "./layout.ts";
import type { ReviewAppDependencies, ReviewEnv } from "./review-context.ts";
import { itemCard, itemFields, itemPath, queueRow } from "./review-views.ts";
import { csrfField, csrfToken } from "./session.ts";

/** The queue page: oldest first, paged, with the total and a button that claims the oldest item. */
export async function queuePage(c: Context<ReviewEnv>, deps: ReviewAppDependencies, toast: string) {
  const reviewer = c.get("reviewer");
  const cursor = c.req.query("cursor");
  const result = await deps.store.pageReviewQueue({
    policyIds: deps.policies.ids(),
    limit: deps.pageSize,
    countCap: REVIEW.queueCountCap,
    ...(cursor ? { cursor } : {}),
  });
  const at = nowOf(deps).getTime();
  const rows = result.records
    .map((r) =>
      queueRow(viewedBy(r, reviewer), deps.policies.version(r.policyId, r.policyVersion), reviewer, at),
    )
    .join("");
  const table = rows
    ? `<table class="stack"><caption>Oldest first: the longest wait at the top</caption>
<thead><tr><th scope="col">item</th><th scope="col">policy</th><th scope="col">waited</th><th scope="col">why a person</th></tr></thead><tbody>${rows}</tbody></table>`
    : "<p>Nothing waits for review.</p>";
  const pages = `<nav class="pages" aria-label="Pages">${cursor ? `<a href="/">First page</a>` : ""}${result.next ? `<a href="/?cursor=${encodeURIComponent(result.next)}" rel="next">Next page</a>` : ""}</nav>`;
  const error = c.req.query("error") ? `<p class="error" role="alert">${html(c.req.query("error"))}</p>` : "";
  const start = result.total
    ? `<form method="post" action="/next" class="start">${csrfField(csrfToken(c))}<button type="submit">Start reviewing (oldest first)</button></form>`
    : "";
  const minutes = Math.round(deps.timings.claimMs / 60_000);
  const total = `${result.total}${result.capped ? " or more" : ""}`;
  const body = `<h1>Review queue (${total} waiting)</h1>${toast}${error}<p>Showing ${result.records.length} of ${total}. <em>Start reviewing</em> or <em>Claim</em> keeps an item yours for ${minutes} minutes; opening one only shows it.</p>${start}${table}${pages}`;
  return page("Review queue", body, reviewer);
}

/** The item page: what the reviewer may do with it now, and nothing changed by looking. */
export async function itemPage(
  c: Context<ReviewEnv>,
  key: RecordKey,
  deps: ReviewAppDependencies,
  csrf: string,
  toast: string,
) {
  const reviewer = c.get("reviewer");
  const loaded = await loadRecord(key, deps);
  // Gold items are named as such only to an admin.
  const [record, policy] = [viewedBy(loaded.record, reviewer), loaded.policy];
  const at = nowOf(deps);
  const may = answerability(record, reviewer, at.getTime());
  const held = record.claim && record.claim.until >= at.getTime() ? record.claim : undefined;
  const minutes = Math.round(deps.timings.claimMs / 60_000);
  const claimForm = (label: string, takeOver: boolean) =>
    `<form method="post" action="${itemPath(record)}/claim" class="claim">${csrfField(csrf)}${takeOver ? `<input type="hidden" name="takeover" value="1">` : ""}<button type="submit">${html(label)}</button></form>`;
  let claim = "";
  if (may.ok && held?.reviewerId === reviewer.id)
    claim = `<p class="held">Yours until ${new Date(held.until).toISOString().slice(11, 16)} UTC.</p>`;
  else if (may.ok) claim = claimForm(`Claim for ${minutes} min (others see it as taken)`, false);
  else if (may.holder && isAdmin(reviewer))
    claim = claimForm(`Take over from ${may.holder.reviewerName}`, true);
  const card = itemCard(record, policy, reviewer, {
    now: at.getTime(),
    csrf,
    mayAnswer: may.ok,
    mayRevise: mayRevise(record, reviewer, at, deps.timings.changeWindowMs),
    claim,
    ...(may.ok ? {} : { blocked: may.reason }),
  });
  const back = `<p><a href="/">Back to the queue</a></p>`;
  return page(`Review ${record.itemId}`, `${toast}${card}${back}`, reviewer);
}

/** The toast after a label: what was stored, an undo button while the window is open, dismiss. */
export async function undoToast(c: Context<ReviewEnv>, deps: ReviewAppDependencies): Promise<string> {
  const done = /^\/items\/([^/]+)\/(\d+)\/(.+)$/.exec(c.req.query("done") ?? "");
  if (!done) return "";
  const key = {
    policyId: decodeURIComponent(done[1]!),
    policyVersion: Number(done[2]),
    itemId: decodeURIComponent(done[3]!),
  };
  const stored = await deps.store.get(key);
  if (!stored) return "";
  const record = viewedBy(stored, c.get("reviewer"));
  const policy = deps.policies.version(record.policyId, record.policyVersion);
  const label = policy?.options.find((o) => o.id === record.label)?.description ?? record.label;
  const what =
    record.status === "reviewed"
      ? `Labelled ${html(record.itemId)} as <strong>${html(label)}</strong>.`
      : `Stored your answer for ${html(record.itemId)}.`;
  const undo =
    record.status === "reviewed" &&
    mayRevise(record, c.get("reviewer"), nowOf(deps), deps.timings.changeWindowMs)
      ? `<form method="post" action="/reviews">${itemFields(record, csrfToken(c))}<input type="hidden" name="action" value="undo"><button type="submit">Undo</button></form>`
      : "";
  // Without a script the link reloads the page without the toast; with one it just closes it.
  const dismiss = `<a class="dismiss" href="${html(c.req.path)}" aria-label="Dismiss this message">Dismiss</a>`;
  return `<div class="toast" role="status"><span>${what}</span>${undo}${dismiss}</div>`;
}
