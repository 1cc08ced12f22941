/**
 * The review pages: the queue of items waiting for a person (oldest first, paged, with the total,
 * an excerpt and how long each has waited), an item page, answers by click or by number key and
 * Enter (which labels and opens the next item), an undo toast after each label, and the decisions
 * view. Opening a page changes nothing: a claim is an explicit POST by someone who may answer
 * ("Start reviewing", "Claim", label and open next, an admin's take-over). The reviewer comes from
 * `identify` (a verified token), never from a form; every POST must pass the Origin and CSRF-token
 * checks. The same app runs in the local mode and behind API Gateway.
 */
import { Hono } from "hono";
import { mayReview } from "../domain/review/review.ts";
import { nowOf } from "../use-cases/review/review-common.ts";
import { claimItem, claimNext } from "../use-cases/review/review-decision.ts";
import { auditView, decisionsView } from "./decisions-view.ts";
import { page } from "./layout.ts";
import { failPage, keyOf, type ReviewAppDependencies, type ReviewEnv } from "./review-context.ts";
import { reviewPosts } from "./review-posts.ts";
import { reviewErrorPage } from "./review-refusals.ts";
import { itemPage, queuePage, undoToast } from "./review-screens.ts";
import { itemPath } from "./review-views.ts";
import { crossSiteProblem, csrfToken } from "./session.ts";

export type { ReviewAppDependencies } from "./review-context.ts";

/** The review pages' routes. */
export function createReviewApp(deps: ReviewAppDependencies): Hono<ReviewEnv> {
  const app = new Hono<ReviewEnv>();
  // A refused review, on any route (the answer routes' too), is an error page with its status.
  app.onError(reviewErrorPage);
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
    if (!mayReview(reviewer))
      return failPage(c, 403, `${reviewer.name} is not in the reviewers or admins group`);
    // Every state-changing request must come from our own pages.
    if (c.req.method === "POST") {
      const form = await c.req.parseBody();
      const refused = crossSiteProblem(c, form.csrf);
      if (refused) return failPage(c, 403, refused);
    }
    await next();
  });
  app.get("/", async (c) => {
    try {
      return c.html(await queuePage(c, deps, await undoToast(c, deps)));
    } catch (error) {
      if (error instanceof RangeError) return failPage(c, 422, error.message);
      throw error;
    }
  });
  app.get("/items/:policyId/:version/:itemId", async (c) => {
    const key = keyOf(c);
    if (typeof key === "string") return failPage(c, 422, key);
    return c.html(await itemPage(c, key, deps, csrfToken(c), await undoToast(c, deps)));
  });
  app.post("/items/:policyId/:version/:itemId/claim", async (c) => {
    const key = keyOf(c);
    if (typeof key === "string") return failPage(c, 422, key);
    const takeOver = (await c.req.parseBody()).takeover === "1";
    await claimItem(key, c.get("reviewer"), deps, { takeOver });
    return c.redirect(itemPath(key), 303);
  });
  app.post("/next", async (c) => {
    const next = await claimNext(c.get("reviewer"), deps);
    if (!next) return c.redirect(`/?error=${encodeURIComponent("Nothing left that you can review.")}`, 303);
    return c.redirect(itemPath(next), 303);
  });
  app.route("/", reviewPosts(deps));
  app.get("/decisions/audit", async (c) => {
    const view = await auditView(deps.store, deps.policies, (name) => c.req.query(name), nowOf(deps));
    return c.html(page("Live error rate", view.body, c.get("reviewer")), view.status);
  });
  app.get("/decisions", async (c) => {
    const view = await decisionsView(
      deps.store,
      deps.policies,
      (name) => c.req.query(name),
      nowOf(deps),
      c.get("reviewer"),
    );
    return c.html(page("Decisions", view.body, c.get("reviewer")), view.status);
  });
  return app;
}
