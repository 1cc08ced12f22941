/**
 * The endpoint's HTTP API as an OpenAPI 3.1 document (docs/openapi.json), generated from the zod
 * schemas the routes validate with and answer in: the System One contract, the chat request, and
 * the shapes of `http-schemas.ts`. `npm run reference` writes it; a test fails when the file and
 * the schemas disagree, and another checks the routes' real answers against the schemas.
 */
import { z } from "zod";
import {
  systemOneRequestShape,
  systemOneResponseSchema,
} from "../../shared/domain/contracts/system-one/index.ts";
import { chatRequestSchema } from "../chat/chat-request.ts";
import {
  batchAnswerSchema,
  batchInvocationSchema,
  chatCompletionChunkSchema,
  chatCompletionSchema,
  errorBodySchema,
  healthSchema,
  modelErrorSchema,
  modelListSchema,
} from "./http-schemas.ts";

/** The named schemas, each read as a client writes it (requests) or as the server writes it (answers). */
const COMPONENTS = {
  SystemOneRequest: [systemOneRequestShape, "input"],
  SystemOneResponse: [systemOneResponseSchema, "output"],
  ChatCompletionRequest: [chatRequestSchema, "input"],
  ChatCompletion: [chatCompletionSchema, "output"],
  ChatCompletionChunk: [chatCompletionChunkSchema, "output"],
  BatchInvocation: [batchInvocationSchema, "input"],
  BatchAnswer: [batchAnswerSchema, "output"],
  ModelList: [modelListSchema, "output"],
  Health: [healthSchema, "output"],
  Error: [errorBodySchema, "output"],
  ModelError: [modelErrorSchema, "output"],
} as const satisfies Record<string, readonly [z.ZodType, "input" | "output"]>;

type ComponentName = keyof typeof COMPONENTS;

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object) => ({ "application/json": { schema } });
const answer = (description: string, name?: ComponentName) => ({
  description,
  ...(name ? { content: json(ref(name)) } : {}),
});

/** The error answers every decision route may give (`api-error.ts`). */
const ERRORS = {
  "404": answer("unknown route, or (chat, as OpenAI answers) an unknown model: model_not_found", "Error"),
  "413": answer("body over the limit (--body-limit, 6 MB by default as SageMaker real-time)", "Error"),
  "422": answer(
    "an invalid field, named by `param`; wrong JSON, duplicate keys, wrong content type",
    "Error",
  ),
  "503": answer(
    "the model is loading, the queue is full (queue_full) or the server is stopping; Retry-After",
    "Error",
  ),
  "504": answer("the request's deadline passed before it was answered", "Error"),
};

/** An invocation's body: a System One request, a chat request, or a batch of System One requests. */
/**
 * The async lane's body (SageMaker Asynchronous Inference, `endpoint/server/async-invocation.ts`):
 * JSON Lines, read and answered one line at a time, in order. OpenAPI 3.1 has no schema per line,
 * so each is described in words, naming the components it holds.
 */
const JSON_LINES = (description: string) => ({
  "application/jsonlines": {
    schema: { type: "string", contentMediaType: "application/jsonlines", description },
  },
});
const INVOCATION = {
  required: true,
  content: {
    ...json({ oneOf: [ref("SystemOneRequest"), ref("ChatCompletionRequest"), ref("BatchInvocation")] }),
    ...JSON_LINES(
      "one SystemOneRequest per line (the async lane's input objects, up to SageMaker's 1 GB); the answer streams back one line per request line",
    ),
  },
};
const INVOCATION_ANSWER = answer("the answer of the body's kind");
const INVOCATION_OK = {
  ...INVOCATION_ANSWER,
  content: {
    ...json({ oneOf: [ref("SystemOneResponse"), ref("ChatCompletion"), ref("BatchAnswer")] }),
    ...JSON_LINES(
      'one line per request line, in order: {"status": 200, "body": SystemOneResponse}, or that item\'s error status and Error body',
    ),
  },
};
const CUSTOM_ATTRIBUTES = {
  name: "X-Amzn-SageMaker-Custom-Attributes",
  in: "header",
  required: false,
  description: "priority=batch puts the call behind every waiting live request (the batch lane sends it)",
  schema: { type: "string" },
};

/**
 * Who may call: the endpoint checks no credential of its own. `decide serve` listens on loopback
 * unless told otherwise, and deployed the SageMaker runtime API signs and authorizes each call
 * (IAM) before the container sees it; so every operation says `security: []` (none needed here),
 * which a linter's `security-defined` rule reads as a decision rather than an omission.
 */
const NO_CREDENTIALS =
  "The endpoint checks no credential itself: it listens on loopback (npx decide serve) or behind the SageMaker runtime API, which authorizes each call with IAM.";

/** Every operation of `paths` with `security: []` (see {@link NO_CREDENTIALS}). */
function withoutCredentials<T extends Record<string, Record<string, object>>>(paths: T): T {
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(Object.entries(operations).map(([method, op]) => [method, { ...op, security: [] }])),
    ]),
  ) as T;
}

const PATHS = {
  "/v1/systemone": {
    post: {
      operationId: "decideSystemOne",
      summary: "Decide: option probabilities for each question on one state (System One)",
      requestBody: { required: true, content: json(ref("SystemOneRequest")) },
      responses: { "200": answer("the answers, keyed as the questions", "SystemOneResponse"), ...ERRORS },
    },
  },
  "/v1/chat/completions": {
    post: {
      operationId: "createChatCompletion",
      summary: "OpenAI-compatible chat completion, non-streaming or streamed (SSE)",
      requestBody: { required: true, content: json(ref("ChatCompletionRequest")) },
      responses: {
        "200": {
          description:
            "a chat.completion, or with stream: true a text/event-stream of chunks ending data: [DONE]",
          content: {
            ...json(ref("ChatCompletion")),
            "text/event-stream": { schema: ref("ChatCompletionChunk") },
          },
        },
        ...ERRORS,
      },
    },
  },
  "/v1/models": {
    get: {
      operationId: "listModels",
      summary: "The served model, in OpenAI's list shape (data) and System One's (models)",
      responses: { "200": answer("the model list", "ModelList") },
    },
  },
  "/healthz": {
    get: {
      operationId: "getHealth",
      summary: "The model's state, the settings and the queue",
      responses: { "200": answer("ready", "Health"), "503": answer("loading, failed or stopping", "Health") },
    },
  },
  "/ping": {
    get: {
      operationId: "ping",
      summary: "SageMaker's health check: 200 once the model is ready",
      responses: { "200": answer("ready"), "503": answer("not ready") },
    },
  },
  "/invocations": {
    post: {
      operationId: "invoke",
      summary: "SageMaker's container contract: a System One body, a chat body, or a batch",
      parameters: [CUSTOM_ATTRIBUTES],
      requestBody: INVOCATION,
      responses: { "200": INVOCATION_OK, ...ERRORS },
    },
  },
  "/endpoints/{name}/invocations": {
    post: {
      operationId: "invokeEndpoint",
      summary:
        "The SageMaker runtime API's path (InvokeEndpoint): point AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME here",
      parameters: [
        { name: "name", in: "path", required: true, schema: { type: "string" } },
        CUSTOM_ATTRIBUTES,
      ],
      requestBody: INVOCATION,
      responses: {
        "200": INVOCATION_OK,
        "424": {
          description: "the container failed, as SageMaker reports it (x-amzn-errortype: ModelError)",
          content: json(ref("ModelError")),
        },
        "503": {
          description: "the container is busy or loading, as SageMaker reports it (ServiceUnavailable)",
        },
      },
    },
  },
};

/**
 * The components read one way (`io`), as OpenAPI 3.1 schemas (JSON Schema 2020-12): a schema
 * another one holds (a batch's requests) is a `$ref` to its own component, not a copy.
 */
function components(io: "input" | "output"): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [name, [schema, readAs]] of Object.entries(COMPONENTS))
    if (readAs === io) registry.add(schema, { id: name });
  const { schemas } = z.toJSONSchema(registry, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => {
      const { $schema: _dialect, $id: _id, ...rest } = schema as Record<string, unknown>;
      return [name, rest];
    }),
  );
}

/** The OpenAPI document of the endpoint, for the package `version`. */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    info: {
      title: "decision-pipeline decision endpoint",
      version,
      description: `The decision endpoint (npx decide serve, and the SageMaker container): System One decisions, OpenAI-compatible chat completions and the SageMaker routes. Generated from the zod schemas by npm run reference; the guide is docs/http-api.md. ${NO_CREDENTIALS}`,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "http://127.0.0.1:8080", description: "npx decide serve (loopback by default)" }],
    paths: withoutCredentials(PATHS),
    components: {
      schemas: ((all) => Object.fromEntries(Object.keys(COMPONENTS).map((name) => [name, all[name]])))({
        ...components("input"),
        ...components("output"),
      }),
    },
  };
}
