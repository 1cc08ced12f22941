/**
 * docs/openapi.json describes what the endpoint really answers: each documented route is called
 * on the real server (the generated tiny model, over HTTP) and its answer is checked against the
 * schema the document was generated from, so a route that changes its answer fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  batchAnswerSchema,
  chatCompletionChunkSchema,
  chatCompletionSchema,
  errorBodySchema,
  healthSchema,
  modelErrorSchema,
  modelListSchema,
} from "../../endpoint/openapi/http-schemas.ts";
import { openApiDocument } from "../../endpoint/openapi/openapi.ts";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { systemOneResponseSchema } from "../../shared/domain/contracts/system-one/index.ts";
import { postJson, startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestEndpoint();
});
afterAll(async () => {
  await server?.close(1_000);
});

const decision = {
  state: "My card was charged twice.",
  questions: {
    team: { type: "choice", instructions: "Which team?", criteria: { billing: "Billing", technical: null } },
    urgency: { type: "score", instructions: "How urgent?", criteria: ["low", "high"] },
    refund: { type: "noul", instructions: "Asks for a refund?" },
  },
};
const chat = {
  messages: [{ role: "user", content: "Hello" }],
  max_tokens: 3,
  logprobs: true,
  top_logprobs: 2,
};

/** `value` parsed by `schema`, failing with zod's issues. */
function holds(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  expect(parsed.error?.issues, what).toBeUndefined();
}

describe("the OpenAPI document's schemas hold for the real answers", () => {
  it("documents every route the server answers, and nothing else", () => {
    const documented = Object.keys(openApiDocument("0").paths as object).sort();
    expect(documented).toEqual(
      [
        "/endpoints/{name}/invocations",
        "/healthz",
        "/invocations",
        "/ping",
        "/v1/chat/completions",
        "/v1/models",
        "/v1/systemone",
      ].sort(),
    );
  });

  it("System One, chat (whole and streamed), models and health", async () => {
    const answer = await postJson(`${server.url}/v1/systemone`, decision);
    expect(answer.status).toBe(200);
    holds(systemOneResponseSchema, answer.json, "/v1/systemone");
    const completion = await postJson(`${server.url}/v1/chat/completions`, chat);
    expect(completion.status).toBe(200);
    holds(chatCompletionSchema, completion.json, "/v1/chat/completions");
    const stream = await postJson(`${server.url}/v1/chat/completions`, {
      ...chat,
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = stream.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    for (const event of events.slice(0, -1)) holds(chatCompletionChunkSchema, JSON.parse(event), event);
    holds(modelListSchema, await (await fetch(`${server.url}/v1/models`)).json(), "/v1/models");
    holds(healthSchema, await (await fetch(`${server.url}/healthz`)).json(), "/healthz");
  });

  it("the SageMaker routes: a batch, its refused item, and a failure as the runtime API reports it", async () => {
    const batch = await postJson(`${server.url}/invocations`, {
      batch: [
        decision,
        { ...decision, questions: { team: { type: "choice", instructions: "x", criteria: {} } } },
      ],
    });
    expect(batch.status).toBe(200);
    holds(batchAnswerSchema, batch.json, "/invocations batch");
    const statuses = (batch.json as { results: { status: number }[] }).results.map((r) => r.status);
    expect(statuses).toEqual([200, 422]);
    const refused = await postJson(`${server.url}/v1/systemone`, { ...decision, state: "" });
    expect(refused.status).toBe(422);
    holds(errorBodySchema, refused.json, "422");
    const failed = await postJson(`${server.url}/endpoints/decision-endpoint/invocations`, { state: "" });
    expect(failed.status).toBe(424);
    expect(failed.headers.get("x-amzn-errortype")).toBe("ModelError");
    holds(modelErrorSchema, failed.json, "424");
  });
});
