/**
 * The endpoint's HTTP routes: System One decisions, OpenAI-compatible chat, the SageMaker
 * container contract (`/ping`, `/invocations`) and the SageMaker runtime API path
 * (`/endpoints/{name}/invocations`) so that the AWS SDK can be pointed at this server unchanged.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "@aws-lambda-powertools/logger";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { parseJsonDocument, parseJsonStrict, stringifyJson } from "../../shared/domain/contracts/json.ts";
import { InvalidDecisionError } from "../runtime/errors.ts";
import { ApiError, invalidField, toApiError } from "./api-error.ts";
import { batchDocument, type Invocation, isBatchBody, scoreBatch } from "./batch.ts";
import { handleChat } from "./chat-route.ts";
import type { ServerConfig } from "./config.ts";
import type { DecisionService } from "./decision-service.ts";
import { errorResponse, jsonResponse } from "./responses.ts";
import { isSystemOneBody, parseSystemOne, systemOneParam, systemOneResponse } from "./systemone.ts";

/** What the routes need. */
export interface AppDependencies {
  readonly service: DecisionService;
  readonly config: ServerConfig;
  readonly logger: Logger;
  /** True once SIGTERM arrived: new requests are refused. */
  readonly isShuttingDown: () => boolean;
  /** Aborted when shutdown starts: queued requests are refused, streams ended. */
  readonly shutdownSignal: AbortSignal;
}

/** Per-request values routes share. */
export type AppEnv = { Variables: { requestId: string } };

/**
 * Model names System One clients send by default, accepted for the served model: `jev-latest`
 * is the default of TypeSafe's Jev SDKs. More come from `--model-alias`.
 */
export const SYSTEM_ONE_ALIASES = ["jev-latest"] as const;

/** Seconds a client should wait before retrying while the model loads. */
const LOADING_RETRY_AFTER_S = 5;

/** Builds the app; `createServer` serves it. */
export function createApp(deps: AppDependencies): Hono<AppEnv> {
  const { service, config, logger } = deps;
  const app = new Hono<AppEnv>();

  app.use(async function requestContext(c, next) {
    const requestId = c.req.header("x-request-id") ?? c.req.header("x-amzn-requestid") ?? randomUUID();
    c.set("requestId", requestId);
    const started = performance.now();
    if (deps.isShuttingDown()) {
      const refused = errorResponse(
        c,
        new ApiError(503, "overloaded_error", "shutting_down", "the server is shutting down", undefined, 1),
      );
      refused.headers.set("connection", "close");
      refused.headers.set("x-request-id", requestId);
      logger.info("request refused: shutting down", { requestId, method: c.req.method, path: c.req.path });
      return refused;
    }
    await next();
    c.header("x-request-id", requestId);
    logger.info("request", {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
    });
  });

  const limit = bodyLimit({
    maxSize: config.bodyLimit,
    onError: (c) =>
      errorResponse(
        c,
        new ApiError(
          413,
          "request_too_large",
          "body_too_large",
          `the body exceeds ${config.bodyLimit} bytes`,
        ),
      ),
  });

  app.get("/ping", (c) => (service.state === "ready" ? c.body(null, 200) : c.body(null, 503)));
  app.get("/healthz", (c) => jsonResponse(c, service.health(), service.state === "ready" ? 200 : 503));
  // Both list shapes in one body: OpenAI clients read `data`, System One clients read `models`.
  app.get("/v1/models", (c) => {
    const name = service.modelName;
    return jsonResponse(c, {
      object: "list",
      data: name ? [{ id: name, object: "model", created: 0, owned_by: "decision-pipeline" }] : [],
      models: name ? [{ name, aliases: aliases(), any_name_accepted: config.anyModel }] : [],
    });
  });

  app.post("/v1/systemone", limit, async (c) => systemOne(c, await readJson(c)));
  app.post("/v1/chat/completions", limit, async (c) => chat(c, await readJson(c)));
  app.post("/invocations", limit, async (c) => invocation(c, await readInvocation(c)));
  app.post("/endpoints/:name/invocations", limit, async (c) => {
    // The SageMaker runtime service wraps container errors: 424 ModelError with the original status.
    try {
      const response = await invocation(c, await readInvocation(c));
      if (response.status < 400) {
        response.headers.set("x-amzn-invoked-production-variant", "AllTraffic");
        return response;
      }
      return sagemakerModelError(c, response.status, await response.text());
    } catch (error) {
      const api = toApiError(error);
      return sagemakerModelError(c, api.status, stringifyJson(api.body()));
    }
  });

  app.notFound((c) =>
    errorResponse(
      c,
      new ApiError(404, "not_found_error", "route_not_found", `no route for ${c.req.method} ${c.req.path}`),
    ),
  );
  app.onError((error, c) => {
    const api = toApiError(error);
    if (api.status >= 500 && !(error instanceof ApiError)) {
      logger.error("request failed", { requestId: c.get("requestId"), error: error as Error });
    }
    return errorResponse(c, api);
  });

  function ready() {
    const scorer = service.scorer;
    if (scorer) return scorer;
    if (service.state === "failed") {
      throw new ApiError(
        500,
        "model_error",
        "model_failed",
        `the model failed to load: ${service.failureReason}`,
      );
    }
    throw new ApiError(
      503,
      "overloaded_error",
      "model_loading",
      "the model is loading; retry shortly",
      undefined,
      LOADING_RETRY_AFTER_S,
    );
  }

  function aliases(): string[] {
    return [...new Set([...SYSTEM_ONE_ALIASES, ...config.modelAliases])];
  }

  function acceptsModel(requested: string | undefined): boolean {
    return (
      requested === undefined ||
      config.anyModel ||
      requested === service.modelName ||
      aliases().includes(requested)
    );
  }

  function unknownModel(requested: string): string {
    return `model: unknown model "${requested}"; this server serves "${service.modelName}" (also as ${aliases().join(", ")}; start it with --any-model to accept any name)`;
  }

  /** System One: an unknown name is an invalid field (422). */
  function checkModelName(requested: string | undefined): void {
    if (!acceptsModel(requested)) throw invalidField("model", unknownModel(requested!), "model_not_found");
  }

  /** OpenAI chat: an unknown name is OpenAI's 404 model_not_found. */
  function checkChatModelName(requested: string | undefined): void {
    if (!acceptsModel(requested)) {
      throw new ApiError(404, "invalid_request_error", "model_not_found", unknownModel(requested!), "model");
    }
  }

  function requestSignal(c: Context): AbortSignal {
    return AbortSignal.any([AbortSignal.timeout(config.deadlineMs), c.req.raw.signal]);
  }

  async function systemOne(c: Context<AppEnv>, body: unknown): Promise<Response> {
    return jsonResponse(c, await systemOneAnswer(c, body));
  }

  /** The System One answer for one request body (an ApiError for a bad one). */
  async function systemOneAnswer(c: Context<AppEnv>, body: unknown): Promise<unknown> {
    const scorer = ready();
    const attributes = customAttributes(c.req.header("x-amzn-sagemaker-custom-attributes"));
    const tokenMass = attributes.get("token-mass");
    const call = parseSystemOne(body, {
      tokenMass: tokenMass === undefined ? config.tokenMass : tokenMass === "true",
    });
    checkModelName(call.model);
    try {
      const result = await scorer.score(call.decision, {
        signal: requestSignal(c),
        queueSignal: deps.shutdownSignal,
        // SageMaker passes CustomAttributes through: batch items wait behind live ones.
        priority: attributes.get("priority") === "batch" ? "batch" : "live",
      });
      return systemOneResponse(call, result, service.modelName!);
    } catch (error) {
      if (error instanceof InvalidDecisionError)
        throw invalidField(systemOneParam(error, call.keys), error.message, error.code);
      throw error;
    }
  }

  async function chat(c: Context<AppEnv>, body: unknown): Promise<Response> {
    const scorer = ready();
    return handleChat(c, body, {
      scorer,
      modelName: service.modelName!,
      checkModelName: checkChatModelName,
      signal: requestSignal(c),
      shutdownSignal: deps.shutdownSignal,
    });
  }

  async function invocation(c: Context<AppEnv>, { body, refused }: Invocation): Promise<Response> {
    if (isSystemOneBody(body)) return systemOne(c, body);
    if (isBatchBody(body)) {
      ready(); // a model that is loading or failed answers the whole call, as for one item
      return jsonResponse(c, await scoreBatch(body, (item) => systemOneAnswer(c, item), refused));
    }
    if (typeof body === "object" && body !== null && "messages" in body) return chat(c, body);
    throw invalidField(
      undefined,
      "the body is neither a System One request (with `questions`), a batch of them (`batch`), nor a chat request (with `messages`)",
    );
  }

  return app;
}

/** Reads a JSON body: checks the content type and refuses malformed JSON and duplicate keys. */
async function readJson(c: Context): Promise<unknown> {
  checkJsonType(c);
  return parseJsonStrict(await c.req.text());
}

function checkJsonType(c: Context): void {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\b/i.test(type.trim())) {
    throw invalidField(
      "content-type",
      `content-type must be application/json, got "${type || "none"}"`,
      "unsupported_content_type",
    );
  }
}

/** A SageMaker invocation's body: a batch's items refused while parsing (a repeated key) answer alone. */
async function readInvocation(c: Context): Promise<Invocation> {
  checkJsonType(c);
  return batchDocument(parseJsonDocument(await c.req.text()));
}

/** Parses `X-Amzn-SageMaker-Custom-Attributes` (`key=value;key=value`). */
function customAttributes(header: string | undefined): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const pair of (header ?? "").split(";")) {
    const [key, value] = pair.split("=").map((part) => part.trim());
    if (key && value !== undefined) attributes.set(key.toLowerCase(), value.toLowerCase());
  }
  return attributes;
}

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
