/**
 * The endpoint's HTTP app, composed of two sub-apps: the SageMaker routes at the root (`/ping`,
 * `/invocations`, `/endpoints/{name}/invocations`, `/healthz`) and the `/v1` routes (System One,
 * OpenAI chat, models). One `onError` turns every domain error into its answer.
 */
import { Hono } from "hono";
import { type AppDependencies, createAnswers } from "./answers.ts";
import { ApiError, toApiError } from "./api-error.ts";
import { containerRoutes } from "./container-routes.ts";
import { type AppEnv, bodyLimitOf, requestContext } from "./request-context.ts";
import { errorResponse } from "./responses.ts";
import { v1Routes } from "./v1-routes.ts";

/** Builds the app; `createServer` serves it. */
export function createApp(deps: AppDependencies): Hono<AppEnv> {
  const answers = createAnswers(deps);
  const limit = bodyLimitOf(deps.config.bodyLimit);
  const app = new Hono<AppEnv>();
  app.use(requestContext(deps.logger, deps.isShuttingDown));
  app.route("/", containerRoutes(deps, answers, limit));
  app.route("/v1", v1Routes(deps, answers, limit));
  app.notFound((c) =>
    errorResponse(
      c,
      new ApiError(404, "not_found_error", "route_not_found", `no route for ${c.req.method} ${c.req.path}`),
    ),
  );
  app.onError((error, c) => {
    const api = toApiError(error);
    if (api.status >= 500 && !(error instanceof ApiError)) {
      deps.logger.error("request failed", { requestId: c.get("requestId"), error });
    }
    return errorResponse(c, api);
  });
  return app;
}
