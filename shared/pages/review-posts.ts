/**
 * The review pages' answer route: label, change or undo (or mark the item a near-duplicate of
 * another: `mark-duplicate.ts`), then open the next item (the default,
 * and what Enter does) or go back to the queue. Opening the next item claims it: a POST the
 * reviewer made by answering, never a page view. A refused answer is the app's error page
 * (`review-refusals.ts`, the `onError` of the app this one is routed into).
 */
import { Hono } from "hono";
import { markDuplicate } from "../use-cases/review/mark-duplicate.ts";
import { claimNext, labelItem, reviseLabel } from "../use-cases/review/review-decision.ts";
import { failPage, type ReviewAppDependencies, type ReviewEnv } from "./review-context.ts";
import { itemPath } from "./review-views.ts";

/** The actions the answer form may ask for. */
const ACTIONS = ["label", "change", "undo", "duplicate"] as const;

/** `POST /reviews`: the answer form's target. */
export function reviewPosts(deps: ReviewAppDependencies): Hono<ReviewEnv> {
  const app = new Hono<ReviewEnv>();
  app.post("/reviews", async (c) => {
    const reviewer = c.get("reviewer");
    const form = await c.req.parseBody();
    const key = {
      itemId: String(form.itemId ?? ""),
      policyId: String(form.policyId ?? ""),
      policyVersion: Number(form.policyVersion),
    };
    const action = String(form.action ?? "label");
    if (!(ACTIONS as readonly string[]).includes(action))
      return failPage(c, 422, `action: "${action}" is not one of ${ACTIONS.join(", ")}`);
    if (action === "duplicate") {
      await markDuplicate(key, String(form.of ?? "").trim(), reviewer, deps);
      return c.redirect(itemPath(key), 303);
    }
    if (action === "undo") {
      await reviseLabel(key, undefined, reviewer, deps);
      return c.redirect(itemPath(key), 303);
    }
    const label = String(form.label ?? "");
    if (action === "change") await reviseLabel(key, label, reviewer, deps);
    else await labelItem({ ...key, label }, reviewer, deps);
    const done = `?done=${encodeURIComponent(itemPath(key))}`;
    if (form.then !== "next") return c.redirect(`/${done}`, 303);
    const next = await claimNext(reviewer, deps);
    return c.redirect(next ? `${itemPath(next)}${done}` : `/${done}`, 303);
  });
  return app;
}
