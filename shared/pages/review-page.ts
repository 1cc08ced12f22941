/**
 * The review pages: the queue of items waiting for a person (oldest first, paged, with the total
 * and how long each has waited), an item page that claims the item while it is open, answers by
 * click or by number key and Enter, an undo toast after each label, and the decisions view. The
 * reviewer comes from `identify` (a verified token), never from a form; every POST must pass the
 * Origin and CSRF-token checks. The same app runs in the local mode and behind API Gateway.
 */
import { type Context, Hono } from "hono";
import { isAdmin, mayReview, type Reviewer } from "../domain/review.ts";
import { estimateAutoErrors, windowStart } from "../use-cases/audit-estimate.ts";
import {
  claimItem,
  labelItem,
  mayRevise,
  type ReviewDependencies,
  ReviewError,
  reviseLabel,
} from "../use-cases/review-decision.ts";
import { decisionFilters, decisionsBody, matchingDecisions } from "./decisions-view.ts";
import { html, page } from "./layout.ts";
import { itemCard, itemFields, itemPath, queueRow } from "./review-views.ts";
import { crossSiteProblem, csrfToken, type Identify } from "./session.ts";

/** What the review pages need: the review use cases' dependencies and who is asking. */
export interface ReviewAppDependencies extends ReviewDependencies {
  readonly identify: Identify;
  /** Items per queue page. */
  readonly pageSize: number;
}

type Env = { Variables: { reviewer: Reviewer } };

/** The review pages' routes. */
export function createReviewApp(deps: ReviewAppDependencies): Hono<Env> {
  const app = new Hono<Env>();
  const now = () => (deps.now ?? (() => new Date()))();
  const fail = (c: Context<Env>, status: 401 | 403 | 404 | 409 | 422, message: string) =>
    c.html(
      page(
        "Cannot do that",
        `<p class="error" role="alert">${html(message)}</p><p><a href="/">Back to the queue</a></p>`,
        c.get("reviewer"),
      ),
      status,
    );

  app.use("*", async (c, next) => {
    const reviewer = await deps.identify(c);
    if (!reviewer) {
      if (c.req.method === "GET") return c.redirect("/auth/login", 303);
      return c.html(
        page(
          "Sign in",
          `<p class="error" role="alert">Sign in first: <a href="/auth/login">sign in</a>.</p>`,
        ),
        401,
      );
    }
    c.set("reviewer", reviewer);
    if (!mayReview(reviewer)) return fail(c, 403, `${reviewer.name} is not in the reviewers or admins group`);
    await next();
  });

  app.get("/", async (c) => {
    const reviewer = c.get("reviewer");
    const cursor = c.req.query("cursor");
    let result: Awaited<ReturnType<typeof deps.store.pageByStatus>>;
    try {
      result = await deps.store.pageByStatus("pending_review", {
        limit: deps.pageSize,
        ...(cursor ? { cursor } : {}),
      });
    } catch (error) {
      if (error instanceof RangeError) return fail(c, 422, error.message);
      throw error;
    }
    const at = now().getTime();
    const rows = result.records
      .map((r) => queueRow(r, deps.policies.version(r.policyId, r.policyVersion), reviewer, at))
      .join("");
    const table = rows
      ? `<table><caption>Oldest first: the longest wait at the top</caption><colgroup><col style="width:34%"><col style="width:18%"><col style="width:12%"><col style="width:36%"></colgroup>
<thead><tr><th scope="col">item</th><th scope="col">policy</th><th scope="col">waited</th><th scope="col">why a person</th></tr></thead><tbody>${rows}</tbody></table>`
      : "<p>Nothing waits for review.</p>";
    const pages = `<nav class="pages" aria-label="Pages">${cursor ? `<a href="/">First page</a>` : ""}${result.next ? `<a href="/?cursor=${encodeURIComponent(result.next)}" rel="next">Next page</a>` : ""}</nav>`;
    const error = c.req.query("error")
      ? `<p class="error" role="alert">${html(c.req.query("error"))}</p>`
      : "";
    const body = `<h1>Review queue (${result.total} waiting)</h1>${error}<p>Showing ${result.records.length} of ${result.total}. Open an item to claim it for ${Math.round(deps.timings.claimMs / 60_000)} minutes.</p>${table}${pages}${await undoToast(c)}`;
    return c.html(page("Review queue", body, reviewer));
  });

  /** The toast after a label: what was stored, with an undo button while the window is open. */
  async function undoToast(c: Context<Env>): Promise<string> {
    const done = /^\/items\/([^/]+)\/(\d+)\/(.+)$/.exec(c.req.query("done") ?? "");
    if (!done) return "";
    const key = {
      policyId: decodeURIComponent(done[1]!),
      policyVersion: Number(done[2]),
      itemId: decodeURIComponent(done[3]!),
    };
    const record = await deps.store.get(key);
    if (!record) return "";
    const what =
      record.status === "reviewed"
        ? `Labelled ${html(record.itemId)} as <strong>${html(record.label)}</strong>.`
        : `Stored your answer for ${html(record.itemId)}.`;
    const undo =
      record.status === "reviewed" && mayRevise(record, c.get("reviewer"), now(), deps.timings.changeWindowMs)
        ? `<form method="post" action="/reviews">${itemFields(record, csrfToken(c))}<input type="hidden" name="action" value="undo"><button type="submit">Undo</button></form>`
        : "";
    return `<div class="toast" role="status"><span>${what}</span>${undo}</div>`;
  }

  app.get("/items/:policyId/:version/:itemId", async (c) => {
    const reviewer = c.get("reviewer");
    const key = {
      policyId: c.req.param("policyId"),
      policyVersion: Number(c.req.param("version")),
      itemId: c.req.param("itemId"),
    };
    if (!Number.isInteger(key.policyVersion) || key.policyVersion < 1)
      return fail(c, 422, `version: "${c.req.param("version")}" is not a policy version`);
    try {
      const { record, holder } = await claimItem(key, reviewer, deps);
      const policy = deps.policies.version(record.policyId, record.policyVersion);
      const at = now();
      let blocked: string | undefined;
      if (record.status !== "pending_review") blocked = `This item is ${record.status.replace("_", " ")}.`;
      else if (holder)
        blocked = `${holder.reviewerName} is reviewing this item until ${new Date(holder.until).toISOString().slice(11, 16)} UTC.`;
      else if (record.disputed && !isAdmin(reviewer))
        blocked = "Two reviewers disagreed: an admin gives the final label.";
      else if (record.firstReview?.reviewerId === reviewer.id)
        blocked = "You gave the first audit label: a second, different reviewer answers now.";
      const card = itemCard(record, policy, reviewer, {
        now: at.getTime(),
        csrf: csrfToken(c),
        mayAnswer: blocked === undefined,
        mayRevise: mayRevise(record, reviewer, at, deps.timings.changeWindowMs),
        ...(blocked ? { blocked } : {}),
      });
      return c.html(page(`Review ${record.itemId}`, card, reviewer));
    } catch (error) {
      if (error instanceof ReviewError) return fail(c, error.status, error.message);
      throw error;
    }
  });

  app.post("/reviews", async (c) => {
    const reviewer = c.get("reviewer");
    const form = await c.req.parseBody();
    const refused = crossSiteProblem(c, form.csrf);
    if (refused) return fail(c, 403, refused);
    const key = {
      itemId: String(form.itemId ?? ""),
      policyId: String(form.policyId ?? ""),
      policyVersion: Number(form.policyVersion),
    };
    const action = String(form.action ?? "label");
    const label = String(form.label ?? "");
    try {
      if (action === "undo") {
        await reviseLabel(key, undefined, reviewer, deps);
        return c.redirect(itemPath(key), 303);
      }
      if (action === "change") await reviseLabel(key, label, reviewer, deps);
      else if (action === "label") await labelItem({ ...key, label }, reviewer, deps);
      else return fail(c, 422, `action: "${action}" is not one of label, change, undo`);
      return c.redirect(`/?done=${encodeURIComponent(itemPath(key))}`, 303);
    } catch (error) {
      if (error instanceof ReviewError) return fail(c, error.status, error.message);
      throw error;
    }
  });

  app.get("/decisions", async (c) => {
    const filters = decisionFilters(
      {
        policy: c.req.query("policy"),
        route: c.req.query("route"),
        since: c.req.query("since"),
        batch: c.req.query("batch"),
      },
      deps.policies,
    );
    const records = filters.problems.length ? [] : await matchingDecisions(deps.store, filters);
    // The live error rate of the policies shown, over the same dates (by default the audit window).
    const audits = filters.problems.length
      ? []
      : await estimateAutoErrors(deps, {
          since: filters.sinceIso ?? windowStart(now()),
          ...(filters.policy ? { policyId: filters.policy } : {}),
        });
    return c.html(
      page("Decisions", decisionsBody(records, filters, deps.policies, audits), c.get("reviewer")),
      filters.problems.length ? 422 : 200,
    );
  });
  return app;
}
