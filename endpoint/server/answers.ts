/**
 * What the routes answer with, whichever path a request came by: a System One decision, a batch
 * of them, or a chat completion, once the model is ready and the model name is one this server
 * serves. The System One request is validated here, once, by the contract
 * (`shared/domain/contracts/system-one/`); the scorer takes it as validated.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import type { Context } from "hono";
import {
  isSystemOneBody,
  parseSystemOneRequest,
  systemOneResponse,
} from "../../shared/domain/contracts/system-one/index.ts";
import { isChatBody } from "../chat/chat-request.ts";
import { ApiError, invalidField } from "./api-error.ts";
import { type Invocation, isBatchBody, scoreBatch } from "./batch.ts";
import { handleChat } from "./chat-route.ts";
import type { ServerConfig } from "./config.ts";
import type { DecisionService, ServedModel } from "./decision-service.ts";
import { type AppEnv, customAttributes } from "./request-context.ts";
import { jsonResponse } from "./responses.ts";

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

/**
 * Model names System One clients send by default, accepted for the served model: `jev-latest`
 * is the default of TypeSafe's Jev SDKs. More come from `--model-alias`.
 */
export const SYSTEM_ONE_ALIASES = ["jev-latest"] as const;

/** Seconds a client should wait before retrying while the model loads. */
const LOADING_RETRY_AFTER_S = 5;

/** The answers the routes give. */
export interface Answers {
  /** Throws the error a request gets while the models load or after one failed. */
  ready(): void;
  /** Names the served model answers to, its own excepted. */
  aliases(): string[];
  /**
   * The System One answer body for one request body (an ApiError or a contract violation for a
   * bad one); `signal` ends it (default: the request's deadline, or its client leaving).
   */
  systemOne(c: Context<AppEnv>, body: unknown, signal?: AbortSignal): Promise<unknown>;
  chat(c: Context<AppEnv>, body: unknown): Promise<Response>;
  /**
   * A SageMaker invocation: one System One request, a batch of them (items refused while the
   * body was parsed answer alone), or a chat request.
   */
  invocation(c: Context<AppEnv>, invocation: Invocation): Promise<Response>;
}

/** Throws the error a request gets while the models load or after one failed; passes once ready. */
function checkReady(service: DecisionService): void {
  if (service.state === "ready") return;
  if (service.state === "failed")
    throw new ApiError(
      500,
      "model_error",
      "model_failed",
      `the model failed to load: ${service.failureReason}`,
    );
  throw new ApiError(
    503,
    "overloaded_error",
    "model_loading",
    "the model is loading; retry shortly",
    undefined,
    LOADING_RETRY_AFTER_S,
  );
}

/**
 * The model names the server answers to, and the message for one it does not. The first model
 * answers to no name, its own, the aliases, and (with --any-model) any name no other model has;
 * each model served beside it answers to its own name only.
 */
function modelNames(service: DecisionService, config: ServerConfig) {
  const aliases = () => [...new Set([...SYSTEM_ONE_ALIASES, ...config.modelAliases])];
  const servedNames = () => service.models.map((served) => served.name);
  return {
    aliases,
    resolve: (requested: string | undefined): ServedModel | undefined => {
      const [first] = service.models;
      if (requested === undefined || aliases().includes(requested)) return first;
      return service.modelNamed(requested) ?? (config.anyModel ? first : undefined);
    },
    unknown: (requested: string) =>
      `model: unknown model "${requested}"; this server serves ${servedNames()
        .map((name) => `"${name}"`)
        .join(
          ", ",
        )} (the first also as ${aliases().join(", ")}; start it with --any-model to accept any name)`,
  };
}

/** The answers of the server `deps` describe. */
export function createAnswers(deps: AppDependencies): Answers {
  const { service, config } = deps;
  const names = modelNames(service, config);
  const ready = () => checkReady(service);
  const requestSignal = (c: Context) =>
    AbortSignal.any([AbortSignal.timeout(config.deadlineMs), c.req.raw.signal]);

  /**
   * The System One answer for one request body (an ApiError for a bad one). `signal`: the
   * deadline, from the request's arrival (a batched call's items share their call's).
   */
  async function systemOne(
    c: Context<AppEnv>,
    body: unknown,
    signal: AbortSignal = requestSignal(c),
  ): Promise<unknown> {
    ready();
    const attributes = customAttributes(c.req.header("x-amzn-sagemaker-custom-attributes"));
    const tokenMass = attributes.get("token-mass");
    const request = parseSystemOneRequest(body, {
      tokenMass: tokenMass === undefined ? config.tokenMass : tokenMass === "true",
    });
    // System One: an unknown name is an invalid field (422).
    const served = names.resolve(request.model);
    if (!served) throw invalidField("model", names.unknown(request.model!), "model_not_found");
    const result = await served.scorer.score(request, {
      signal,
      queueSignal: deps.shutdownSignal,
      // SageMaker passes CustomAttributes through: batch items wait behind live ones.
      priority: attributes.get("priority") === "batch" ? "batch" : "live",
    });
    return systemOneResponse(request, result, served.name);
  }

  async function chat(c: Context<AppEnv>, body: unknown): Promise<Response> {
    ready();
    return handleChat(c, body, {
      // OpenAI chat: an unknown name is OpenAI's 404 model_not_found.
      modelFor: (requested) => {
        const served = names.resolve(requested);
        if (!served)
          throw new ApiError(
            404,
            "invalid_request_error",
            "model_not_found",
            names.unknown(requested!),
            "model",
          );
        return served;
      },
      signal: requestSignal(c),
      shutdownSignal: deps.shutdownSignal,
    });
  }

  async function invocation(c: Context<AppEnv>, { body, refused }: Invocation): Promise<Response> {
    if (isSystemOneBody(body)) return jsonResponse(c, await systemOne(c, body));
    if (isBatchBody(body)) {
      ready(); // a model that is loading or failed answers the whole call, as for one item
      // One deadline for the whole call: its client (and SageMaker's 60 s) waits for all of it.
      const signal = requestSignal(c);
      return jsonResponse(c, await scoreBatch(body, (item) => systemOne(c, item, signal), refused));
    }
    if (isChatBody(body)) return chat(c, body);
    throw invalidField(
      undefined,
      "the body is neither a System One request (with `questions`), a batch of them (`batch`), nor a chat request (with `messages`)",
    );
  }

  return { ready, aliases: names.aliases, systemOne, chat, invocation };
}
