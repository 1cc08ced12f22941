/**
 * Reviewer identity from signed tokens: the Cognito user pool's ID tokens when deployed, and the
 * local sign-in stub's tokens in `npm start` (same claims, an RSA key made at start-up). Both are
 * checked by aws-jwt-verify (signature, issuer, audience, expiry); the reviewer is read only from
 * the verified claims. Also reads the session token from a request's cookies or bearer header.
 */
import { CognitoJwtVerifier, JwtRsaVerifier } from "aws-jwt-verify";
import type { JwtPayload } from "aws-jwt-verify/jwt-model";
import type { Reviewer } from "../domain/review/review.ts";

/** The cookie that holds the session's ID token (HttpOnly). */
export const SESSION_COOKIE = "review_session";

/** Verifies a token and returns the reviewer it names; throws when it is not valid. */
export type VerifyToken = (token: string) => Promise<Reviewer>;

/** A verified token that cannot name a reviewer (no subject): refused like an invalid one. */
export class TokenClaimsError extends Error {
  override name = "TokenClaimsError";
}

/**
 * The reviewer named by verified claims (`sub`; name, email or username; `cognito:groups`, the
 * array Cognito sends). A token without a non-empty `sub` names nobody and is refused, so a
 * stored reviewer id is never "undefined"; groups that are not strings are ignored.
 */
export function reviewerFromClaims(claims: JwtPayload): Reviewer {
  const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);
  const sub = text(claims.sub);
  if (!sub) throw new TokenClaimsError("the token has no subject (sub): it names no reviewer");
  const groups = claims["cognito:groups"];
  return {
    id: sub,
    name: text(claims.name) ?? text(claims.email) ?? text(claims["cognito:username"]) ?? sub,
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === "string" && g !== "") : [],
  };
}

/** Verifies ID tokens of a Cognito user pool app client. */
export function cognitoTokenVerifier(settings: { userPoolId: string; clientId: string }): VerifyToken {
  const verifier = CognitoJwtVerifier.create({ ...settings, tokenUse: "id" });
  return async (token) => reviewerFromClaims(await verifier.verify(token));
}

/** Verifies tokens signed by a known RSA key set (the local sign-in stub). */
export function rsaTokenVerifier(settings: {
  issuer: string;
  audience: string;
  jwks: { keys: Record<string, unknown>[] };
}): VerifyToken {
  const verifier = JwtRsaVerifier.create({ issuer: settings.issuer, audience: settings.audience });
  verifier.cacheJwks(settings.jwks as unknown as Parameters<typeof verifier.cacheJwks>[0]);
  return async (token) => reviewerFromClaims(await verifier.verify(token));
}

/** One cookie's value from a `Cookie` header or from API Gateway's `cookies` list. */
export function cookieValue(
  cookies: string | readonly string[] | undefined,
  name: string,
): string | undefined {
  const pairs = (typeof cookies === "string" ? cookies.split(";") : (cookies ?? [])).flatMap((c) =>
    c.split(";"),
  );
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return decodeURIComponent(pair.slice(at + 1).trim());
  }
  return undefined;
}

/** The session token of a request: the bearer token if any, else the session cookie. */
export function sessionToken(request: {
  authorization?: string | undefined;
  cookies?: string | readonly string[] | undefined;
}): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.authorization ?? "");
  return bearer?.[1] ?? cookieValue(request.cookies, SESSION_COOKIE);
}

/**
 * The reviewer as the API Gateway authorizer hands it to the integration (strings only): the
 * groups as a JSON array, so a group whose name holds a comma stays one group.
 */
export function authorizerContext(reviewer: Reviewer): Record<string, string> {
  return { sub: reviewer.id, name: reviewer.name, groups: JSON.stringify(reviewer.groups) };
}

/** The groups of an authorizer context: a JSON array of strings, anything else none. */
function groupsOf(value: unknown): string[] {
  if (typeof value !== "string") return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((g): g is string => typeof g === "string") : [];
  } catch {
    return [];
  }
}

/** The reviewer an HTTP API event carries from the Lambda authorizer, if any. */
export function reviewerFromAuthorizer(event: unknown): Reviewer | undefined {
  const context = (
    event as { requestContext?: { authorizer?: { lambda?: Record<string, unknown> } } } | undefined
  )?.requestContext?.authorizer?.lambda;
  if (!context || typeof context.sub !== "string" || !context.sub) return undefined;
  return {
    id: context.sub,
    name: typeof context.name === "string" && context.name ? context.name : context.sub,
    groups: groupsOf(context.groups),
  };
}
