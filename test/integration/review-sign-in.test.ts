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
import { isAdmin } from "../../shared/domain/review.ts";
import { addHostedSignIn } from "../../shared/pages/hosted-sign-in.ts";

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

  beforeAll(async () => {
    // The token endpoint: a code is good once, and only with the verifier of its challenge.
    oauth = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const form = new URLSearchParams(body);
        const challenge = challenges.get(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        const ok =
          request.url === "/oauth2/token" &&
          form.get("grant_type") === "authorization_code" &&
          form.get("client_id") === "client-1" &&
          form.get("redirect_uri") === `${appUrl}/auth/callback` &&
          challenge === createHash("sha256").update(verifier).digest("base64url");
        challenges.delete(form.get("code") ?? "");
        response.setHeader("content-type", "application/json");
        if (!ok) {
          response.statusCode = 400;
          response.end(JSON.stringify({ error: "invalid_grant" }));
          return;
        }
        response.end(
          JSON.stringify({
            id_token: issuer.issue({ name: "Ana", groups: ["reviewers"] }),
            expires_in: 3600,
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
    expect(session).toMatch(/HttpOnly; Secure; SameSite=Lax; Path=\/; Max-Age=3600/);
    const token = session.slice(SESSION_COOKIE.length + 1).split(";")[0]!;
    expect((await verify(token)).name).toBe("Ana");
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
