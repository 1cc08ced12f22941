/**
 * The local mode's sign-in stand-in for the Cognito hosted UI, clearly marked as local and served
 * on loopback only: a form that asks for a name and a group and issues an ID token with the
 * claims Cognito would put in it (`sub`, `name`, `cognito:groups`, `aud`, `iss`, `exp`), signed
 * with an RSA key made at start-up. The review page verifies it exactly as the deployed
 * authorizer verifies Cognito's tokens, so identity always comes from a verified token. The form
 * passes the same Origin and CSRF-token checks as the review pages' own forms (no login CSRF).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign } from "node:crypto";
import type { Hono } from "hono";
import { SESSION_COOKIE } from "../../shared/adapters/review-tokens.ts";
import { ADMINS_GROUP, REVIEWERS_GROUP } from "../../shared/domain/review/review.ts";
import { html, page } from "../../shared/pages/layout.ts";
import { crossSiteProblem, csrfField, csrfToken } from "../../shared/pages/session.ts";

/** Issuer and audience of the stub's tokens. */
export const LOCAL_ISSUER = "http://127.0.0.1/local-sign-in";
export const LOCAL_AUDIENCE = "decision-pipeline-local-review";

/** A signing key and the key set that verifies it. */
export interface LocalTokenIssuer {
  readonly jwks: { keys: Record<string, unknown>[] };
  /** Signs an ID token for a reviewer, valid for `ttlSeconds`. */
  issue(reviewer: { name: string; groups: readonly string[]; sub?: string }, ttlSeconds?: number): string;
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** Makes an RSA key and an issuer of tokens signed with it. */
export function createLocalTokenIssuer(): LocalTokenIssuer {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomUUID();
  const jwk = {
    ...(publicKey.export({ format: "jwk" }) as Record<string, unknown>),
    kid,
    alg: "RS256",
    use: "sig",
  };
  return { jwks: { keys: [jwk] }, issue: (reviewer, ttl) => signToken(privateKey, kid, reviewer, ttl) };
}

function signToken(
  key: KeyObject,
  kid: string,
  reviewer: { name: string; groups: readonly string[]; sub?: string },
  ttlSeconds = 8 * 3600,
): string {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    // A stable subject per name, as a user pool gives one user the same sub on every sign-in.
    sub: reviewer.sub ?? createHash("sha256").update(reviewer.name).digest("hex").slice(0, 32),
    name: reviewer.name,
    "cognito:groups": [...reviewer.groups],
    token_use: "id",
    aud: LOCAL_AUDIENCE,
    iss: LOCAL_ISSUER,
    iat: now,
    exp: now + ttlSeconds,
  };
  const signingInput = `${base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid }))}.${base64url(JSON.stringify(claims))}`;
  return `${signingInput}.${base64url(sign("RSA-SHA256", Buffer.from(signingInput), key))}`;
}

/** Adds `/auth/login` (form and submit) and `/auth/logout` to the local review server. */
export function addLocalSignIn(app: Hono, issuer: LocalTokenIssuer): void {
  app.get("/auth/login", (c) =>
    c.html(
      page(
        "Local sign-in",
        `<h1>Local sign-in</h1><p class="error" role="note"><strong>Local mode only.</strong> Deployed, reviewers sign in
through the Cognito hosted page; this stand-in issues a token for whoever you say you are.</p>
<form method="post" action="/auth/login">${csrfField(csrfToken(c))}<p><label>Name <input name="name" required autocomplete="username"></label></p>
<fieldset><legend>Group</legend><label><input type="radio" name="group" value="${REVIEWERS_GROUP}" checked> reviewer</label>
<label><input type="radio" name="group" value="${ADMINS_GROUP}"> admin (may change or undo any label)</label></fieldset>
<p><button type="submit">Sign in</button></p></form>`,
      ),
    ),
  );
  app.post("/auth/login", async (c) => {
    const form = await c.req.parseBody();
    // Login CSRF: another site must not sign the browser in as someone of its choosing.
    const refused = crossSiteProblem(c, form.csrf);
    if (refused)
      return c.html(page("Local sign-in", `<p class="error" role="alert">${html(refused)}</p>`), 403);
    const name = String(form.name ?? "").trim();
    const group = String(form.group ?? "");
    if (!name || ![REVIEWERS_GROUP, ADMINS_GROUP].includes(group))
      return c.html(
        page("Local sign-in", `<p class="error" role="alert">A name and a group are required.</p>`),
        422,
      );
    const token = issuer.issue({
      name,
      groups: group === ADMINS_GROUP ? [ADMINS_GROUP, REVIEWERS_GROUP] : [group],
    });
    c.header("Set-Cookie", `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${8 * 3600}`);
    return c.redirect("/", 303);
  });
  // The local session lasts its whole Max-Age: a page's renewal has nothing to renew.
  app.post("/auth/refresh", (c) => c.body(null, 204));
  app.get("/auth/logout", (c) => {
    c.header("Set-Cookie", `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`);
    return c.html(
      page("Signed out", `<p>Signed out. <a href="/auth/login">Sign in again</a> (${html("local")}).</p>`),
    );
  });
}
