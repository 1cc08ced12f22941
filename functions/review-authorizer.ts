/**
 * The HTTP API's Lambda authorizer in front of every review route: verifies the Cognito ID token
 * from the session cookie (browsers) or the bearer header (scripts) and hands the reviewer's
 * verified id, name and groups to the integration. A request without a valid token, or from
 * someone in neither the reviewers nor the admins group, is refused before any function runs.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import type { APIGatewayRequestAuthorizerEventV2 } from "aws-lambda";
import {
  authorizerContext,
  cognitoTokenVerifier,
  sessionToken,
  type VerifyToken,
} from "../shared/adapters/review-tokens.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { mayReview } from "../shared/domain/review/review.ts";
import { requireEnv } from "./support/config.ts";

const logger = new Logger({ serviceName: "review-authorizer" });

/** The simple response of an HTTP API Lambda authorizer. */
export interface AuthorizerResult {
  readonly isAuthorized: boolean;
  readonly context?: Record<string, string>;
}

/** The authorizer for a token verifier. */
export function createReviewAuthorizer(verify: () => VerifyToken) {
  let verifier: VerifyToken | undefined;
  return async (event: APIGatewayRequestAuthorizerEventV2): Promise<AuthorizerResult> => {
    const token = sessionToken({ authorization: event.headers?.authorization, cookies: event.cookies });
    if (!token) return { isAuthorized: false };
    verifier ??= verify();
    try {
      const reviewer = await verifier(token);
      if (!mayReview(reviewer)) {
        logger.info("refused: not a reviewer", { sub: reviewer.id });
        return { isAuthorized: false };
      }
      return { isAuthorized: true, context: authorizerContext(reviewer) };
    } catch (error) {
      logger.info("refused: token not valid", { reason: (error as Error).message });
      return { isAuthorized: false };
    }
  };
}

/** The Lambda entry point. */
export const handler = createReviewAuthorizer(() =>
  cognitoTokenVerifier({
    userPoolId: requireEnv(FUNCTION_ENV.USER_POOL_ID),
    clientId: requireEnv(FUNCTION_ENV.USER_POOL_CLIENT_ID),
  }),
);
