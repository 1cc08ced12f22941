/**
 * Sign-in through the Cognito hosted (managed login) pages, for the deployed review pages:
 * `/auth/login` sends the browser to the user pool's authorize endpoint with PKCE and a state;
 * `/auth/callback` checks the state, exchanges the code for tokens at the token endpoint, verifies
 * the ID token and keeps it in an HttpOnly, Secure, SameSite=Lax session cookie; `/auth/logout`
 * clears it and signs out of the hosted pages. These routes hold no data, which is why they are
 * the only ones without the authorizer.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Hono } from "hono";
import { cookieValue, SESSION_COOKIE, type VerifyToken } from "../adapters/review-tokens.ts";
import { html, page } from "./layout.ts";

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

/** Adds the three sign-in routes. */
export function addHostedSignIn(app: Hono, settings: HostedSignInSettings): void {
  const callbackOf = (url: string) => `${new URL(url).origin}/auth/callback`;
  const failed = (message: string) =>
    page(
      "Sign-in failed",
      `<p class="error" role="alert">${html(message)}</p><p><a href="/auth/login">Try again</a></p>`,
    );

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

  app.get("/auth/callback", async (c) => {
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
    const tokens = (await response.json()) as { id_token?: string; expires_in?: number };
    if (!tokens.id_token) return c.html(failed("the token endpoint returned no ID token"), 401);
    try {
      await settings.verify(tokens.id_token);
    } catch (error) {
      return c.html(failed(`the ID token is not valid: ${(error as Error).message}`), 401);
    }
    c.header(
      "Set-Cookie",
      `${SESSION_COOKIE}=${tokens.id_token}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${tokens.expires_in ?? 3600}`,
      { append: true },
    );
    c.header("Set-Cookie", `${FLOW_COOKIE}=; HttpOnly; Secure; SameSite=Lax; Path=/auth; Max-Age=0`, {
      append: true,
    });
    return c.redirect("/", 303);
  });

  app.get("/auth/logout", (c) => {
    c.header("Set-Cookie", `${SESSION_COOKIE}=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0`);
    const query = new URLSearchParams({
      client_id: settings.clientId,
      logout_uri: `${new URL(c.req.url).origin}/auth/login`,
    });
    return c.redirect(`${settings.domain}/logout?${query}`, 302);
  });
}
