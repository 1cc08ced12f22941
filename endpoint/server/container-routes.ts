/**
 * The SageMaker routes: the container contract (`GET /ping`, `POST /invocations`: JSON for a
 * real-time call, JSONL for an asynchronous one, `async-invocation.ts`), health, and
 * the SageMaker runtime API path (`POST /endpoints/{name}/invocations`), so that the AWS SDK can
 * be pointed at this server unchanged. On that path a failure comes back as the SageMaker
 * runtime service reports it: 424 ModelError wrapping the container's status and body.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { stringifyJson } from "../../shared/domain/contracts/json.ts";
import type { Answers, AppDependencies } from "./answers.ts";
import { asyncJsonLines } from "./async-invocation.ts";
import { type AppEnv, readInvocation } from "./request-context.ts";
import { jsonResponse } from "./responses.ts";

/** The sub-app of the SageMaker routes (mounted at the root). */
export function containerRoutes(
  deps: Pick<AppDependencies, "service" | "config">,
  answers: Answers,
  limit: MiddlewareHandler<AppEnv>,
): Hono<AppEnv> {
  const { service } = deps;
  const routes = new Hono<AppEnv>();
  routes.get("/ping", (c) => (service.state === "ready" ? c.body(null, 200) : c.body(null, 503)));
  routes.get("/healthz", (c) => jsonResponse(c, service.health(), service.state === "ready" ? 200 : 503));
  // An asynchronous invocation (JSONL, up to 1 GB) is streamed item by item before the body limit.
  const jsonLines = asyncJsonLines(answers, deps.config.bodyLimit);
  routes.post("/invocations", jsonLines, limit, async (c) => answers.invocation(c, await readInvocation(c)));
  // After the body limit: a body SageMaker itself would refuse is not the container's error.
  routes.post("/endpoints/:name/invocations", limit, asSageMakerRuntime, async (c) =>
    answers.invocation(c, await readInvocation(c)),
  );
  return routes;
}

/** Rewrites the container's answer as the SageMaker runtime service returns it. */
const asSageMakerRuntime: MiddlewareHandler<AppEnv> = async function asSageMakerRuntime(c, next) {
  await next();
  if (c.res.status < 400) {
    c.res.headers.set("x-amzn-invoked-production-variant", "AllTraffic");
    return;
  }
  // `c.res = undefined` first: Hono would otherwise merge the old response's headers into the new one.
  const { status } = c.res;
  const text = await c.res.text();
  c.res = undefined;
  c.res = sagemakerModelError(c, status, text);
};

/** What the SageMaker runtime service answers when the container fails. */
function sagemakerModelError(c: Context, originalStatus: number, originalBody: string): Response {
  if (originalStatus === 503) {
    // Overload and loading stay a retryable 503, as the service reports a busy endpoint.
    return c.body(stringifyJson({ __type: "ServiceUnavailable", message: originalBody }), 503, {
      "content-type": "application/json",
      "x-amzn-errortype": "ServiceUnavailable",
      "retry-after": "1",
    });
  }
  const kind = originalStatus < 500 ? "client" : "server";
  const body = {
    __type: "ModelError",
    message: `Received ${kind} error (${originalStatus}) from primary with message "${originalBody}".`,
    ErrorCode: originalStatus < 500 ? "CLIENT_ERROR_FROM_MODEL" : "SERVER_ERROR_FROM_MODEL",
    OriginalStatusCode: originalStatus,
    OriginalMessage: originalBody,
  };
  return c.body(stringifyJson(body), 424, {
    "content-type": "application/json",
    "x-amzn-errortype": "ModelError",
  });
}
