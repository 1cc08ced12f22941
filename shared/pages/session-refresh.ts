/**
 * Renewing a deployed review session: the ID token in the session cookie lives
 * `REVIEW.tokenMinutes`, the refresh token in its own HttpOnly cookie (path `/auth`, so no data
 * route ever sees it) `REVIEW.sessionHours`. `/auth/refresh` trades the refresh token at the
 * token endpoint for a new ID token: an open page's script calls it (POST) before the token
 * expires; a bookmark of it (GET, `?next=/path`) resumes a session whose page was closed.
 * Sign-out revokes the refresh token, so a stolen one stops working there too.
 */
import type { Context, Hono } from "hono";
import { cookieValue, SESSION_COOKIE, type VerifyToken } from "../adapters/review-tokens.ts";
import { REVIEW } from "../domain/topology.ts";

/** The refresh token's cookie. */
export const REFRESH_COOKIE = "review_refresh";

const secure = "HttpOnly; Secure; SameSite=Lax";

/** The Set-Cookie values after a sign-in or a refresh: the session (ID token) and, when given, the refresh token. */
export function sessionCookies(
  idToken: string,
  expiresIn: number | undefined,
  refreshToken?: string,
): string[] {
  const cookies = [
    `${SESSION_COOKIE}=${idToken}; ${secure}; Path=/; Max-Age=${expiresIn ?? REVIEW.tokenMinutes * 60}`,
  ];
  if (refreshToken)
    cookies.push(
      `${REFRESH_COOKIE}=${refreshToken}; ${secure}; Path=/auth; Max-Age=${REVIEW.sessionHours * 3600}`,
    );
  return cookies;
}

/** The Set-Cookie values that end a session. */
export function clearedSessionCookies(): string[] {
  return [
    `${SESSION_COOKIE}=; ${secure}; Path=/; Max-Age=0`,
    `${REFRESH_COOKIE}=; ${secure}; Path=/auth; Max-Age=0`,
  ];
}

/** Where the token and revocation endpoints are, and this app's (public) client. */
export interface RefreshSettings {
  readonly domain: string;
  readonly clientId: string;
  readonly verify: VerifyToken;
  readonly fetch?: typeof fetch;
}

/** A same-origin path to go on to, or `/`. */
function nextPath(next: string | undefined): string {
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/";
}

/** The new ID token for the request's refresh token, or undefined when there is none or it is refused. */
async function refreshed(c: Context, settings: RefreshSettings) {
  const refreshToken = cookieValue(c.req.header("cookie"), REFRESH_COOKIE);
  if (!refreshToken) return undefined;
  const response = await (settings.fetch ?? fetch)(`${settings.domain}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      client_id: settings.clientId,
      refresh_token: refreshToken,
    }),
  });
  if (!response.ok) return undefined;
  const tokens = (await response.json()) as { id_token?: string; expires_in?: number };
  if (!tokens.id_token) return undefined;
  try {
    await settings.verify(tokens.id_token);
  } catch {
    return undefined;
  }
  return { idToken: tokens.id_token, expiresIn: tokens.expires_in };
}

/** Adds `/auth/refresh` (POST from a page's script, GET from a bookmark). */
export function addSessionRefresh(app: Hono, settings: RefreshSettings): void {
  const renew = async (c: Context) => {
    const tokens = await refreshed(c, settings);
    for (const cookie of tokens ? sessionCookies(tokens.idToken, tokens.expiresIn) : clearedSessionCookies())
      c.header("Set-Cookie", cookie, { append: true });
    return tokens;
  };
  app.post("/auth/refresh", async (c) => ((await renew(c)) ? c.body(null, 204) : c.body(null, 401)));
  app.get("/auth/refresh", async (c) =>
    c.redirect((await renew(c)) ? nextPath(c.req.query("next")) : "/auth/login", 303),
  );
}

/** Revokes the request's refresh token at the user pool (best effort: the cookie goes either way). */
export async function revokeRefreshToken(
  c: Context,
  settings: Omit<RefreshSettings, "verify">,
): Promise<void> {
  const token = cookieValue(c.req.header("cookie"), REFRESH_COOKIE);
  if (!token) return;
  await (settings.fetch ?? fetch)(`${settings.domain}/oauth2/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token, client_id: settings.clientId }),
  }).catch(() => undefined);
}
