/**
 * The deployed sign-in path without AWS: the HTTP API authorizer on tokens signed by a real RSA
 * key (valid, expired, foreign, outside the groups), and the hosted sign-in routes against an
 * OAuth token endpoint on loopback that checks the PKCE verifier as Cognito does.
 */
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReviewAuthorizer } from "../../functions/review-authorizer.ts";
import { createLocalTokenIssuer, LOCAL_AUDIENCE, LOCAL_ISSUER } from "../../infra/local/sign-in-stub.ts";
import {
  reviewerFromAuthorizer,
  rsaTokenVerifier,
  SESSION_COOKIE,
} from "../../shared/adapters/review-tokens.ts";
import { isAdmin } from "../../shared/domain/review/review.ts";
import { addHostedSignIn } from "../../shared/pages/hosted-sign-in.ts";
import { REFRESH_COOKIE } from "../../shared/pages/session-refresh.ts";

const issuer = createLocalTokenIssuer();
const verify = rsaTokenVerifier({ issuer: LOCAL_ISSUER, audience: LOCAL_AUDIENCE, jwks: issuer.jwks });

describe("review authorizer", () => {
  const authorize = createReviewAuthorizer(() => verify);
  const event = (headers: Record<string, string>, cookies?: string[]) =>
    ({ headers, ...(cookies ? { cookies } : {}) }) as never;

  it("passes a reviewer's token from the cookie or the bearer header, with the verified identity", async () => {
    const token = issuer.issue({ name: "Ana", groups: ["reviewers"], sub: "sub-ana" });
    expect(await authorize(event({}, [`other=1`, `${SESSION_COOKIE}=${token}`]))).toEqual({
      isAuthorized: true,
      context: { sub: "sub-ana", name: "Ana", groups: JSON.stringify(["reviewers"]) },
    });
    expect((await authorize(event({ authorization: `Bearer ${token}` }))).isAuthorized).toBe(true);
  });

  it("refuses no token, an expired one, one signed by another key, and someone outside the groups", async () => {
    expect(await authorize(event({}))).toEqual({ isAuthorized: false });
    const expired = issuer.issue({ name: "Ana", groups: ["reviewers"] }, -60);
    expect((await authorize(event({ authorization: `Bearer ${expired}` }))).isAuthorized).toBe(false);
    const foreign = createLocalTokenIssuer().issue({ name: "Mallory", groups: ["admins"] });
    expect((await authorize(event({ authorization: `Bearer ${foreign}` }))).isAuthorized).toBe(false);
    const outsider = issuer.issue({ name: "Eve", groups: [] });
    expect((await authorize(event({ authorization: `Bearer ${outsider}` }))).isAuthorized).toBe(false);
    const tampered = issuer.issue({ name: "Ana", groups: ["reviewers"] }).replace(/\.[^.]+\./, (middle) => {
      const claims = JSON.parse(Buffer.from(middle.slice(1, -1), "base64url").toString());
      return `.${Buffer.from(JSON.stringify({ ...claims, "cognito:groups": ["admins"] })).toString("base64url")}.`;
    });
    expect((await authorize(event({ authorization: `Bearer ${tampered}` }))).isAuthorized).toBe(false);
  });
});

describe("reviewer identity from verified claims", () => {
  // A second key that signs any claims, as a misconfigured identity provider might.
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = {
    ...(publicKey.export({ format: "jwk" }) as Record<string, unknown>),
    kid: "k1",
    alg: "RS256",
  };
  const signed = (claims: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1000);
    const body = { aud: LOCAL_AUDIENCE, iss: LOCAL_ISSUER, iat: now, exp: now + 600, ...claims };
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const input = `${part({ alg: "RS256", typ: "JWT", kid: "k1" })}.${part(body)}`;
    return `${input}.${sign("RSA-SHA256", Buffer.from(input), privateKey).toString("base64url")}`;
  };
  const authorize = createReviewAuthorizer(() =>
    rsaTokenVerifier({ issuer: LOCAL_ISSUER, audience: LOCAL_AUDIENCE, jwks: { keys: [jwk] } }),
  );
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } }) as never;

  it("refuses a verified token without a subject, so no reviewer is stored as undefined", async () => {
    expect(await authorize(bearer(signed({ name: "Nobody", "cognito:groups": ["admins"] })))).toEqual({
      isAuthorized: false,
    });
    expect(await authorize(bearer(signed({ sub: "", "cognito:groups": ["admins"] })))).toEqual({
      isAuthorized: false,
    });
    expect(
      (await authorize(bearer(signed({ sub: "s-1", "cognito:groups": ["reviewers"] })))).isAuthorized,
    ).toBe(true);
  });

  it("keeps a group whose name holds a comma as one group: it never makes anyone an admin", async () => {
    const result = await authorize(
      bearer(signed({ sub: "s-2", "cognito:groups": ["reviewers", "ops,admins"] })),
    );
    expect(result.isAuthorized).toBe(true);
    const reviewer = reviewerFromAuthorizer({ requestContext: { authorizer: { lambda: result.context } } })!;
    expect(reviewer.groups).toEqual(["reviewers", "ops,admins"]);
    expect(isAdmin(reviewer)).toBe(false);
    // Only "ops,admins": in neither group, refused.
    expect(
      (await authorize(bearer(signed({ sub: "s-3", "cognito:groups": ["ops,admins"] })))).isAuthorized,
    ).toBe(false);
  });
});

describe("hosted sign-in routes", () => {
  let oauth: Server;
  let oauthUrl: string;
  let app: ReturnType<typeof serve>;
  let appUrl: string;
  const challenges = new Map<string, string>();
  const revoked: string[] = [];

  beforeAll(async () => {
    // The token endpoint: a code is good once, and only with the verifier of its challenge.
    oauth = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const form = new URLSearchParams(body);
        response.setHeader("content-type", "application/json");
        if (request.url === "/oauth2/revoke") {
          revoked.push(form.get("token") ?? "");
          response.end("{}");
          return;
        }
        // A refresh token is good until revoked.
        if (form.get("grant_type") === "refresh_token") {
          const good = form.get("refresh_token") === "rt-1" && !revoked.includes("rt-1");
          response.statusCode = good ? 200 : 400;
          response.end(
            JSON.stringify(
              good
                ? { id_token: issuer.issue({ name: "Ana", groups: ["reviewers"] }), expires_in: 900 }
                : { error: "invalid_grant" },
            ),
          );
          return;
        }
        const challenge = challenges.get(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const ok =
          request.url === "/oauth2/token" &&
          form.get("grant_type") === "authorization_code" &&
          form.get("client_id") === "client-1" &&
          form.get("redirect_uri") === `${appUrl}/auth/callback` &&
          challenge === createHash("sha256").update(verifier).digest("base64url");
        challenges.delete(form.get("code") ?? "");
        if (!ok) {
          response.statusCode = 400;
          response.end(JSON.stringify({ error: "invalid_grant" }));
          return;
        }
        response.end(
          JSON.stringify({
            id_token: issuer.issue({ name: "Ana", groups: ["reviewers"] }),
            expires_in: 900,
            refresh_token: "rt-1",
          }),
        );
      });
    });
    await new Promise<void>((resolve) => oauth.listen(0, "127.0.0.1", resolve));
    oauthUrl = `http://127.0.0.1:${(oauth.address() as AddressInfo).port}`;
    const hono = new Hono();
    addHostedSignIn(hono, { domain: oauthUrl, clientId: "client-1", verify });
    app = serve({ fetch: hono.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise<void>((resolve) => app.once("listening", () => resolve()));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => oauth.close(() => resolve()));
    await new Promise<void>((resolve) => app.close(() => resolve()));
  });

  async function startSignIn() {
    const login = await fetch(`${appUrl}/auth/login`, { redirect: "manual" });
    expect(login.status).toBe(302);
    const location = new URL(login.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${oauthUrl}/oauth2/authorize`);
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    expect(login.headers.get("set-cookie")).toMatch(/HttpOnly; Secure; SameSite=Lax/);
    return {
      state: location.searchParams.get("state")!,
      challenge: location.searchParams.get("code_challenge")!,
      cookie,
    };
  }

  it("exchanges the code with the PKCE verifier and keeps the verified ID token in an HttpOnly, Secure cookie", async () => {
    const { state, challenge, cookie } = await startSignIn();
    challenges.set("code-1", challenge);
    const callback = await fetch(`${appUrl}/auth/callback?code=code-1&state=${state}`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(callback.status).toBe(303);
    const session = callback.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(session).toMatch(/HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=900/);
    const token = session.slice(SESSION_COOKIE.length + 1).split(";")[0]!;
    expect((await verify(token)).name).toBe("Ana");
    // The refresh token: HttpOnly, and only the sign-in routes (/auth) ever see it.
    const refresh = callback.headers.getSetCookie().find((c) => c.startsWith(`${REFRESH_COOKIE}=`))!;
    expect(refresh).toMatch(
      /^review_refresh=rt-1; HttpOnly; Secure; SameSite=Lax; Path=\/auth; Max-Age=28800/,
    );
  });

  it("renews the short-lived session with the refresh token, and ends it when sign-out revokes that", async () => {
    const cookie = `${REFRESH_COOKIE}=rt-1`;
    const renewed = await fetch(`${appUrl}/auth/refresh`, { method: "POST", headers: { cookie } });
    expect(renewed.status).toBe(204);
    const session = renewed.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect((await verify(session.slice(SESSION_COOKIE.length + 1).split(";")[0]!)).name).toBe("Ana");
    // A bookmark of the refresh route resumes a closed page's session, to a path of this site only.
    const resumed = await fetch(`${appUrl}/auth/refresh?next=/decisions`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect([resumed.status, resumed.headers.get("location")]).toEqual([303, "/decisions"]);
    const elsewhere = await fetch(`${appUrl}/auth/refresh?next=//evil.example`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(elsewhere.headers.get("location")).toBe("/");
    const signedOut = await fetch(`${appUrl}/auth/logout`, { headers: { cookie }, redirect: "manual" });
    expect(revoked).toContain("rt-1");
    expect(signedOut.headers.getSetCookie().some((c) => c.startsWith(`${REFRESH_COOKIE}=;`))).toBe(true);
    const refused = await fetch(`${appUrl}/auth/refresh`, { method: "POST", headers: { cookie } });
    expect(refused.status).toBe(401);
    expect(refused.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`))).toBe(true);
    const gone = await fetch(`${appUrl}/auth/refresh`, { headers: { cookie }, redirect: "manual" });
    expect(gone.headers.get("location")).toBe("/auth/login");
  });

  it("refuses a callback whose state was not started here, and a code the token endpoint rejects", async () => {
    const { state, challenge, cookie } = await startSignIn();
    challenges.set("code-2", challenge);
    const forged = await fetch(`${appUrl}/auth/callback?code=code-2&state=someone-elses`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(forged.status).toBe(400);
    expect(forged.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(false);
    const unknownCode = await fetch(`${appUrl}/auth/callback?code=never-issued&state=${state}`, {
      headers: { cookie },
      redirect: "manual",
    });
    expect(unknownCode.status).toBe(401);
    expect(await unknownCode.text()).toContain("the token endpoint refused the code (HTTP 400)");
  });
});
