/**
 * The endpoint over plain HTTP: System One shapes, metadata routes, and every bad input.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { systemOneResponseSchema } from "../../shared/domain/contracts/system-one/index.ts";
import { postJson, startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestEndpoint();
});
afterAll(async () => {
  await server.close();
});

const ticket = "My card was charged twice for one subscription; please refund.";
const systemOne = {
  model: "tiny",
  state: ticket,
  questions: {
    team: {
      type: "choice",
      instructions: "Which team should handle this ticket?",
      criteria: { technical: "Errors and crashes", billing: "Charges and refunds", account: null },
    },
    frustration: {
      type: "score",
      instructions: "How frustrated is the customer?",
      criteria: ["calm", "annoyed", "angry"],
    },
    refund: {
      type: "noul",
      instructions: "Does the customer ask for a refund?",
      criteria: { true: "A refund is requested" },
    },
  },
};

type Answer = Record<string, unknown> & { x_detail: Record<string, unknown> };

describe("POST /v1/systemone", () => {
  it("answers choice, score and noul in the System One shapes, criteria order kept", async () => {
    const response = await postJson(`${server.url}/v1/systemone`, systemOne);
    expect(response.status).toBe(200);
    const body = response.json as {
      id: string;
      model: string;
      answers: Record<string, Answer>;
      usage: Record<string, number>;
    };
    expect(body.id).toMatch(/^so-/);
    expect(body.model).toBe("tiny");
    expect(Object.keys(body.answers)).toEqual(["team", "frustration", "refund"]);
    const team = body.answers.team!;
    expect(team.type).toBe("choice");
    expect(Object.keys(team.probabilities as object)).toEqual(["technical", "billing", "account"]);
    const p = Object.values(team.probabilities as Record<string, number>);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(team.choice).toBe(["technical", "billing", "account"][p.indexOf(Math.max(...p))]);
    expect(team.confidence).toBeCloseTo((3 * Math.max(...p) - 1) / 2, 9);
    const score = body.answers.frustration!;
    expect(score.legend).toEqual({ 0: "calm", 1: "annoyed", 2: "angry" });
    const levels = score.probabilities as Record<string, number>;
    expect(score.score).toBeCloseTo(levels["1"]! + 2 * levels["2"]!, 9);
    const refund = body.answers.refund!;
    expect(Object.keys(refund).sort()).toEqual(["noul", "type", "x_detail"]);
    expect(refund.noul).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBe(0);
    expect(body.usage.input_tokens).toBeGreaterThan(100);
    // Several questions share the state's evaluation.
    expect(score.x_detail.reused_tokens).toBeGreaterThan(0);
    expect(team.x_detail.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Object.keys(team.x_detail.logits as object)).toEqual(Object.keys(team.probabilities as object));
    // What the server emits is what the pipeline's contract parses.
    expect(systemOneResponseSchema.safeParse(body).error).toBeUndefined();
  });

  it("writes every probability and score with a decimal point", async () => {
    const response = await postJson(`${server.url}/v1/systemone`, {
      state: "x",
      questions: {
        q: { type: "choice", instructions: "Pick", criteria: { a: "A", b: "B" }, temperature: 1e-6 },
      },
    });
    // A very low temperature pushes probabilities to exactly 0 and 1: still written as 0.0 and 1.0.
    expect(response.text).toMatch(/"probabilities":\{"a":(0\.0|1\.0),"b":(0\.0|1\.0)\}/);
    expect(response.text).toMatch(/"confidence":1\.0/);
  });
});

describe("metadata routes", () => {
  it("reports health, models and SageMaker ping", async () => {
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as Record<string, unknown>;
    expect(health.status).toBe("ready");
    expect((health.model as { sha256: string }).sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(health.threads).toBe(2);
    expect(health.context_size).toBe(2048);
    expect(health.gpu).toEqual({ requested: "off", active: false });
    // Slots sized from the model's KV cache (at most 8); earlier tests in this file were counted.
    const cache = health.prefix_cache as { slots: number; hits: number; misses: number };
    expect(cache.slots).toBeGreaterThanOrEqual(1);
    expect(cache.slots).toBeLessThanOrEqual(8);
    expect(cache.hits + cache.misses).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/ping`)).status).toBe(200);
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["tiny"]);
  });
});

describe("bad input", () => {
  const url = () => `${server.url}/v1/systemone`;
  const expectError = async (
    body: unknown,
    status: number,
    code: string,
    param?: string,
    headers?: Record<string, string>,
  ) => {
    const response = await postJson(url(), body, headers);
    expect(response.status).toBe(status);
    const error = (response.json as { error: Record<string, string> }).error;
    expect(error.code).toBe(code);
    expect(error.type).toBeTruthy();
    expect(error.message!.length).toBeGreaterThan(5);
    if (param) expect(error.param).toBe(param);
    expect(response.text).not.toMatch(/\n\s+at /); // never a stack trace
    return error;
  };
  const choice = (criteria: Record<string, string>) => ({
    state: "x",
    questions: { q: { type: "choice", instructions: "Pick", criteria } },
  });
  const many = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, `Option ${i}`]));

  it("answers 422 naming the parameter for each invalid field", async () => {
    await expectError(
      { state: "x", questions: { q: { type: "rank", instructions: "Pick" } } },
      422,
      "invalid_value",
      "questions.q.type",
    );
    await expectError(choice(many(1)), 422, "invalid_value", "questions.q.criteria");
    await expectError(choice(many(17)), 422, "invalid_value", "questions.q.criteria");
    await expectError(
      '{"state":"x","questions":{"q":{"type":"choice","instructions":"Pick","criteria":{"a":"A","a":"B"}}}}',
      422,
      "invalid_json",
      "questions.q.criteria.a",
    );
    await expectError({ ...choice(many(2)), state: "  " }, 422, "invalid_decision", "state");
    await expectError({ ...choice(many(2)), state: {} }, 422, "invalid_decision", "state");
    await expectError('{"state": "x", "questions": ', 422, "invalid_json");
    await expectError(choice(many(2)), 422, "unsupported_content_type", "content-type", {
      "content-type": "text/plain",
    });
    await expectError({ ...choice(many(2)), model: "gpt-4" }, 422, "model_not_found", "model");
    await expectError({ state: "x", questions: {} }, 422, "invalid_value", "questions");
    await expectError(
      { state: "x", questions: { q: { type: "score", instructions: "How?", criteria: ["a", "a"] } } },
      422,
      "invalid_value",
      "questions.q.criteria.1",
    );
    await expectError({ ...choice(many(2)), extra: true }, 422, "invalid_value");
    await expectError(
      {
        state: "x",
        questions: {
          q: { type: "score", instructions: "How?", criteria: ["a", "b"], option_order: "cyclic" },
        },
      },
      422,
      "invalid_decision",
      "questions.q.option_order",
    );
    await expectError(
      { state: "x", questions: { q: { type: "noul", instructions: "Is it?", option_order: "shuffled" } } },
      422,
      "invalid_value",
      "questions.q.option_order",
    );
  });

  it("averages over the options' rotations when a question asks for the cyclic order, and says so", async () => {
    const team = { ...systemOne.questions.team, option_order: "cyclic" };
    const reordered = {
      ...team,
      criteria: { account: null, billing: "Charges and refunds", technical: "Errors and crashes" },
    };
    const answers = [];
    for (const question of [team, reordered]) {
      const response = await postJson(`${server.url}/v1/systemone`, {
        state: ticket,
        questions: { team: question },
      });
      expect(response.status).toBe(200);
      answers.push((response.json as { answers: Record<string, Answer> }).answers.team!);
    }
    const [first, second] = answers;
    expect(first!.x_detail.option_order).toBe("cyclic");
    expect(first!.x_detail.passes).toBe(3);
    for (const id of ["technical", "billing", "account"]) {
      const a = (first!.probabilities as Record<string, number>)[id]!;
      expect(Math.abs(a - (second!.probabilities as Record<string, number>)[id]!)).toBeLessThan(1e-9);
    }
  });

  it("refuses a prompt longer than the context with 422, naming the question", async () => {
    await expectError(
      { state: "word ".repeat(3000), questions: { long: { type: "noul", instructions: "Is it?" } } },
      422,
      "prompt_too_long",
      "questions.long",
    );
  });

  it("answers 404 for unknown routes and 413 for oversized bodies", async () => {
    const missing = await fetch(`${server.url}/v2/unknown`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
    const huge = await postJson(url(), { state: "x".repeat(7 * 1024 * 1024), questions: {} });
    expect(huge.status).toBe(413);
    expect((huge.json as { error: { type: string } }).error.type).toBe("request_too_large");
  });

  it("keeps serving after all of that", async () => {
    const response = await postJson(url(), choice(many(3)));
    expect(response.status).toBe(200);
  });
});
