/**
 * The sign-in routes (`/auth/login`, `/auth/callback`, `/auth/logout`) behind the HTTP API, the
 * only routes without the authorizer: they hold no data and have no table or bus access.
 */
import { Hono } from "hono";
import { handle } from "hono/aws-lambda";
import { cognitoTokenVerifier } from "../shared/adapters/review-tokens.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { addHostedSignIn } from "../shared/pages/hosted-sign-in.ts";
import { requireEnv } from "./support/config.ts";

const app = new Hono();
addHostedSignIn(app, {
  domain: requireEnv(FUNCTION_ENV.COGNITO_DOMAIN),
  clientId: requireEnv(FUNCTION_ENV.USER_POOL_CLIENT_ID),
  verify: cognitoTokenVerifier({
    userPoolId: requireEnv(FUNCTION_ENV.USER_POOL_ID),
    clientId: requireEnv(FUNCTION_ENV.USER_POOL_CLIENT_ID),
  }),
});

/** The Lambda entry point (HTTP API events). */
export const handler = handle(app);
