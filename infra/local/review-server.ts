/**
 * The local review server: the local sign-in stub (`/auth/login`, clearly marked local) and the
 * review pages, on loopback only. Each request's reviewer comes from the stub's signed token,
 * verified as the deployed authorizer verifies Cognito's; tests use the same server.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { rsaTokenVerifier, sessionToken } from "../../shared/adapters/review-tokens.ts";
import type { ReviewAppDependencies } from "../../shared/pages/review-page.ts";
import { createReviewApp } from "../../shared/pages/review-page.ts";
import {
  addLocalSignIn,
  createLocalTokenIssuer,
  LOCAL_AUDIENCE,
  LOCAL_ISSUER,
  type LocalTokenIssuer,
} from "./sign-in-stub.ts";

/** A running local review server. */
export interface LocalReviewServer {
  readonly url: string;
  /** The stub's token issuer (tests sign requests with it). */
  readonly issuer: LocalTokenIssuer;
  close(): Promise<void>;
}

/** Starts the review pages with the local sign-in on 127.0.0.1:`port` (0: any free port). */
export async function startLocalReviewServer(
  deps: Omit<ReviewAppDependencies, "identify">,
  port: number,
): Promise<LocalReviewServer> {
  const issuer = createLocalTokenIssuer();
  const verify = rsaTokenVerifier({ issuer: LOCAL_ISSUER, audience: LOCAL_AUDIENCE, jwks: issuer.jwks });
  const app = new Hono();
  addLocalSignIn(app, issuer);
  app.route(
    "/",
    createReviewApp({
      ...deps,
      identify: async (c) => {
        const token = sessionToken({
          authorization: c.req.header("authorization"),
          cookies: c.req.header("cookie"),
        });
        return token ? verify(token).catch(() => undefined) : undefined;
      },
    }),
  );
  const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", () => resolve());
    server.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
