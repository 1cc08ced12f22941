/**
 * Who is asking, and whether a state-changing request really comes from our own pages. Identity
 * is supplied by the host (deployed: the API Gateway authorizer's verified claims; local: the
 * sign-in stub's verified token). Cross-site request forgery is refused twice over: the request's
 * Origin (or Sec-Fetch-Site) must be this site, and the form must carry the token that only our
 * pages can read from the SameSite=Strict cookie (double submit).
 */
import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { cookieValue } from "../adapters/review-tokens.ts";
import type { Reviewer } from "../domain/review/review.ts";

/** The reviewer of a request, or undefined when it is not signed in. */
export type Identify = (c: Context) => Promise<Reviewer | undefined>;

/** The double-submit token's cookie. */
export const CSRF_COOKIE = "review_csrf";

/** The request's CSRF token, set as a cookie on first use. */
export function csrfToken(c: Context): string {
  const existing = cookieValue(c.req.header("cookie"), CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{20,}$/.test(existing)) return existing;
  const token = randomBytes(24).toString("base64url");
  const secure = new URL(c.req.url).protocol === "https:" ? "; Secure" : "";
  c.header("Set-Cookie", `${CSRF_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/${secure}`, {
    append: true,
  });
  return token;
}

/** The hidden form field that carries the token. */
export function csrfField(token: string): string {
  return `<input type="hidden" name="csrf" value="${token}">`;
}

/** Why a state-changing request is refused as cross-site, or undefined when it is our own. */
export function crossSiteProblem(c: Context, formToken: unknown): string | undefined {
  const origin = c.req.header("origin");
  const own = new URL(c.req.url).origin;
  if (origin !== undefined && origin !== own)
    return `cross-site request refused: Origin ${origin} is not ${own}`;
  const site = c.req.header("sec-fetch-site");
  if (origin === undefined && site !== undefined && site !== "same-origin" && site !== "none")
    return `cross-site request refused: Sec-Fetch-Site is ${site}`;
  const cookie = cookieValue(c.req.header("cookie"), CSRF_COOKIE);
  if (!cookie || typeof formToken !== "string" || formToken !== cookie)
    return "cross-site request refused: the form's CSRF token is missing or does not match; reload the page";
  return undefined;
}
