/**
 * Sign-in through the Cognito hosted (managed login) pages, for the deployed review pages:
 * `/auth/login` sends the browser to the user pool's authorize endpoint with PKCE and a state;
 * `/auth/callback` checks the state, exchanges the code for tokens at the token endpoint, verifies
 * the ID token and keeps it in an HttpOnly, Secure, SameSite=Lax session cookie, the refresh token
 * in one only the sign-in routes see (`session-refresh.ts` renews the session with it);
 * `/auth/logout` revokes the refresh token, clears both and signs out of the hosted pages. These
 * routes hold no data, which is why they are the only ones without the authorizer.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Context, Hono } from "hono";
import { cookieValue, type VerifyToken } from "../adapters/review-tokens.ts";
import { html, page } from "./layout.ts";
import {
  addSessionRefresh,
  clearedSessionCookies,
  revokeRefreshToken,
  sessionCookies,
} from "./session-refresh.ts";

/** Where the user pool's hosted pages are, and this app's client. */
export interface HostedSignInSettings {
  /** The hosted domain's origin, e.g. https://my-prefix.auth.eu-west-1.amazoncognito.com. */
  readonly domain: string;
  readonly clientId: string;
  readonly verify: VerifyToken;
  /** The token endpoint's HTTP client (tests pass their own). */
  readonly fetch?: typeof fetch;
}

const FLOW_COOKIE = "review_sign_in";

const callbackOf = (url: string) => `${new URL(url).origin}/auth/callback`;
const failed = (message: string) =>
  page(
    "Sign-in failed",
    `<p class="error" role="alert">${html(message)}</p><p><a href="/auth/login">Try again</a></p>`,
  );

/** The callback: the state checked, the code exchanged with the PKCE verifier, the tokens verified and kept. */
async function callback(c: Context, settings: HostedSignInSettings): Promise<Response> {
  const [state, verifier] = (cookieValue(c.req.header("cookie"), FLOW_COOKIE) ?? "").split(".");
  const code = c.req.query("code");
  if (c.req.query("error"))
    return c.html(
      failed(`the sign-in page answered: ${c.req.query("error_description") ?? c.req.query("error")}`),
      401,
    );
  if (!code || !state || !verifier || c.req.query("state") !== state)
    return c.html(failed("this sign-in was not started here or took too long (state mismatch)"), 400);
  const response = await (settings.fetch ?? fetch)(`${settings.domain}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: settings.clientId,
      code,
      redirect_uri: callbackOf(c.req.url),
      code_verifier: verifier,
    }),
  });
  if (!response.ok)
    return c.html(failed(`the token endpoint refused the code (HTTP ${response.status})`), 401);
  const tokens = (await response.json()) as {
    id_token?: string;
    expires_in?: number;
    refresh_token?: string;
  };
  if (!tokens.id_token) return c.html(failed("the token endpoint returned no ID token"), 401);
  try {
    await settings.verify(tokens.id_token);
  } catch (error) {
    return c.html(failed(`the ID token is not valid: ${(error as Error).message}`), 401);
  }
  for (const cookie of sessionCookies(tokens.id_token, tokens.expires_in, tokens.refresh_token))
    c.header("Set-Cookie", cookie, { append: true });
  c.header("Set-Cookie", `${FLOW_COOKIE}=; HttpOnly; Secure; SameSite=Lax; Path=/auth; Max-Age=0`, {
    append: true,
  });
  return c.redirect("/", 303);
}

/** Adds the sign-in routes: login, callback, refresh and logout. */
export function addHostedSignIn(app: Hono, settings: HostedSignInSettings): void {
  app.get("/auth/login", (c) => {
    const verifier = randomBytes(32).toString("base64url");
    const state = randomBytes(16).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    c.header(
      "Set-Cookie",
      `${FLOW_COOKIE}=${state}.${verifier}; HttpOnly; Secure; SameSite=Lax; Path=/auth; Max-Age=600`,
    );
    const query = new URLSearchParams({
      response_type: "code",
      client_id: settings.clientId,
      redirect_uri: callbackOf(c.req.url),
      scope: "openid email profile",
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    return c.redirect(`${settings.domain}/oauth2/authorize?${query}`, 302);
  });
  app.get("/auth/callback", (c) => callback(c, settings));
  addSessionRefresh(app, settings);
  app.get("/auth/logout", async (c) => {
    await revokeRefreshToken(c, settings);
    for (const cookie of clearedSessionCookies()) c.header("Set-Cookie", cookie, { append: true });
    const query = new URLSearchParams({
      client_id: settings.clientId,
      logout_uri: `${new URL(c.req.url).origin}/auth/login`,
    });
    return c.redirect(`${settings.domain}/logout?${query}`, 302);
  });
}
