/**
 * The endpoint driven by real clients: the AWS SDK's SageMakerRuntimeClient (pointed at the
 * server through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, as the pipeline does) and the official
 * openai npm client.
 */
import {
  InvokeEndpointCommand,
  ModelError,
  type SageMakerRuntimeClient,
} from "@aws-sdk/client-sagemaker-runtime";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { ENDPOINT_BATCHING, ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { runtimeClientFor, startTestEndpoint } from "../helpers/endpoint.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

/** The deployed batching settings. */
const BATCHED = { ...ENDPOINT_CALLS, ...ENDPOINT_BATCHING };

let server: RunningServer;
let sagemaker: SageMakerRuntimeClient;
let openai: OpenAI;

beforeAll(async () => {
  server = await startTestEndpoint();
  sagemaker = runtimeClientFor(server);
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "local", maxRetries: 0 });
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME;
  sagemaker.destroy();
  await server.close();
});

const decision = {
  state: { message: "The app crashes every time I open settings." },
  questions: {
    team: {
      type: "choice",
      instructions: "Which team?",
      criteria: { billing: "Billing", technical: "Technical" },
    },
  },
};

describe("SageMakerRuntimeClient", () => {
  it("invokes the endpoint through the runtime API path", async () => {
    const output = await sagemaker.send(
      new InvokeEndpointCommand({
        EndpointName: "decision-endpoint",
        ContentType: "application/json",
        Accept: "application/json",
        Body: JSON.stringify(decision),
      }),
    );
    expect(output.ContentType).toBe("application/json");
    expect(output.InvokedProductionVariant).toBe("AllTraffic");
    const body = JSON.parse(new TextDecoder().decode(output.Body)) as {
      answers: { team: { choice: string } };
    };
    expect(["billing", "technical"]).toContain(body.answers.team.choice);
  });

  it("surfaces a container error as ModelError 424 with the original status", async () => {
    const error = await sagemaker
      .send(
        new InvokeEndpointCommand({
          EndpointName: "decision-endpoint",
          ContentType: "application/json",
          Body: JSON.stringify({
            ...decision,
            questions: { team: { type: "choice", instructions: "Which?", criteria: { only: "one" } } },
          }),
        }),
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ModelError);
    const modelError = error as ModelError;
    expect(modelError.$metadata.httpStatusCode).toBe(424);
    expect(modelError.OriginalStatusCode).toBe(422);
    expect(modelError.OriginalMessage).toMatch(/questions\.team\.criteria/);
  });

  it("answers the container's own /invocations with the same body, and chat bodies too", async () => {
    const direct = await fetch(`${server.url}/invocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(decision),
    });
    expect(direct.status).toBe(200);
    const chat = await fetch(`${server.url}/invocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "Hi" }], max_tokens: 3 }),
    });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { object: string }).object).toBe("chat.completion");
  });
});

describe("openai client", () => {
  const messages = [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content: "Say something about billing." },
  ];

  it("completes a chat, honouring max_tokens, with usage", async () => {
    const completion = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 6,
      temperature: 0,
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]!.message.role).toBe("assistant");
    expect(typeof completion.choices[0]!.message.content).toBe("string");
    expect(completion.usage!.completion_tokens).toBeLessThanOrEqual(6);
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(5);
    expect(["stop", "length"]).toContain(completion.choices[0]!.finish_reason);
  });

  it("streams the same greedy text as the non-streaming call, ending with usage", async () => {
    const whole = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 10,
      temperature: 0,
    });
    const stream = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 10,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    expect(usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  it("returns log-probabilities with the requested number of alternatives", async () => {
    const completion = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 4,
      temperature: 0,
      logprobs: true,
      top_logprobs: 3,
    });
    const content = completion.choices[0]!.logprobs!.content!;
    expect(content.length).toBe(completion.usage!.completion_tokens);
    for (const token of content) {
      expect(token.logprob).toBeLessThanOrEqual(0);
      expect(token.top_logprobs).toHaveLength(3);
      // Greedy: the chosen token is the most likely one.
      expect(token.logprob).toBeCloseTo(token.top_logprobs[0]!.logprob, 9);
    }
  });

  it("stops before a stop sequence and is reproducible with a seed", async () => {
    const base = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 12,
      temperature: 0,
    });
    const text = base.choices[0]!.message.content!;
    const stop = text.slice(2).trim().slice(0, 2);
    expect(stop).toHaveLength(2);
    const stopped = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 12,
      temperature: 0,
      stop: [stop],
    });
    expect(stopped.choices[0]!.message.content).toBe(text.slice(0, text.indexOf(stop)));
    expect(stopped.choices[0]!.finish_reason).toBe("stop");
    const a = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 8,
      temperature: 1.2,
      seed: 42,
    });
    const b = await openai.chat.completions.create({
      model: "tiny",
      messages,
      max_tokens: 8,
      temperature: 1.2,
      seed: 42,
    });
    expect(a.choices[0]!.message.content).toBe(b.choices[0]!.message.content);
  });

  it("reports a bad request as a 422 and an unknown model as a 404, both raised by the client", async () => {
    const error = await openai.chat.completions.create({ model: "tiny", messages: [], max_tokens: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(422);
    const unknown = await openai.chat.completions.create({ model: "gpt-4o", messages, max_tokens: 3 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // An unknown model is OpenAI's own 404 model_not_found.
    expect((unknown as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });
});

describe("batched invocations", () => {
  const policy = (id: string, question: string) =>
    parsePolicy({ ...TEAMS_POLICY, id, question, layout: "policy-first" });
  const tickets = policy("tickets", "Which team should handle this ticket?");
  const other = policy("other", "Which queue fits this message best?");
  const items = Array.from({ length: 10 }, (_, i) => ({
    id: `I${i}`,
    policy: "p",
    state: `message number ${i} about a refund`,
  }));

  it("sends ten items in one call, grouped by policy there, with the answers of single calls", async () => {
    const client = sagemaker;
    const batching = new BatchingDecisionEndpoint(client, "decision-endpoint", {
      ...BATCHED,
      attempts: 1,
      windowMs: 50,
    });
    const single = new SageMakerDecisionEndpoint(client, "decision-endpoint", {
      ...ENDPOINT_CALLS,
      attempts: 1,
    });
    const policyOf = (i: number) => (i % 2 === 0 ? tickets : other);
    const batched = await Promise.all(items.map((item, i) => batching.decide(item as never, policyOf(i))));
    expect(batching.stats).toEqual({ calls: 1, items: 10 });
    for (const [i, item] of items.entries()) {
      const alone = await single.decide(item as never, policyOf(i));
      expect(batched[i]!.logits).toEqual(alone.logits);
    }
  });

  it("answers one error per bad item and the rest normally; refuses an empty or oversized batch", async () => {
    const good = { state: "a refund please", questions: decision.questions };
    const response = await fetch(`${server.url}/invocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ batch: [good, { state: "x", questions: { q: { type: "sideways" } } }, good] }),
    });
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as {
      results: { status: number; body: { error?: { message: string } } }[];
    };
    expect(results.map((r) => r.status)).toEqual([200, 422, 200]);
    expect(results[1]!.body.error?.message).toMatch(/questions\.q/);
    const post = (batch: unknown) =>
      fetch(`${server.url}/invocations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ batch }),
      });
    expect((await post([])).status).toBe(422);
    expect((await post(Array.from({ length: 33 }, () => good))).status).toBe(422);
  });

  it("rejects only the refused item of a batch through the client", async () => {
    const batching = new BatchingDecisionEndpoint(sagemaker, "decision-endpoint", {
      ...BATCHED,
      attempts: 1,
      windowMs: 50,
    });
    const huge = { id: "BIG", policy: "p", state: "word ".repeat(20_000) }; // past the context: 422
    const results = await Promise.allSettled([
      batching.decide(items[0] as never, tickets),
      batching.decide(huge as never, tickets),
      batching.decide(items[1] as never, tickets),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(EndpointRejectedError);
    expect(batching.stats.calls).toBe(1);
  });
});

describe("batched invocations under a failing call", () => {
  it("isolates an item that fails the whole call: its neighbours are decided on their own calls", async () => {
    // A client whose first batched call fails as a whole (as when one item crashes the container).
    let batchedCalls = 0;
    const flaky = {
      send: (command: InvokeEndpointCommand, options?: unknown) => {
        const body = String(command.input.Body);
        if (body.startsWith('{"batch"') && ++batchedCalls === 1)
          return Promise.reject(
            Object.assign(new Error("boom"), { name: "ModelError", OriginalStatusCode: 500 }),
          );
        if (body.includes("POISON"))
          return Promise.reject(
            Object.assign(new Error("poison"), { name: "ModelError", OriginalStatusCode: 500 }),
          );
        return sagemaker.send(command, options as never);
      },
    } as unknown as SageMakerRuntimeClient;
    const batching = new BatchingDecisionEndpoint(flaky, "decision-endpoint", {
      ...BATCHED,
      attempts: 2,
      windowMs: 50,
      baseDelayMs: 1,
    });
    const policy = TEAMS_POLICY;
    const results = await Promise.allSettled(
      ["a refund", "POISON", "a crash"].map((state, i) =>
        batching.decide({ id: `X${i}`, state } as never, policy),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(batchedCalls).toBe(1);
  });
});
