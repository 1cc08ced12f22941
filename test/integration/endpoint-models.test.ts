/**
 * Several models on one endpoint (`--extra-model NAME=PATH`, as a cascade's later tiers run in
 * the local mode): the System One and chat `model` fields choose, the first model keeps its
 * aliases and answers requests without a name, each model has its own prefix cache (a request
 * to one leaves the other's untouched), unknown names are refused as with one model, and a
 * bad entry or a name given twice is refused at start.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, resolveServerConfig } from "../../endpoint/server/config.ts";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { postJson, startTestEndpoint } from "../helpers/endpoint.ts";
import { generatedModel } from "../helpers/models.ts";

let server: RunningServer;

beforeAll(async () => {
  const second = await generatedModel("tiny-seed-7", { seed: 7 });
  server = await startTestEndpoint({ "model-name": "small", "extra-model": `large=${second}` });
}, 180_000);

afterAll(async () => {
  await server?.close();
});

const request = (model?: string) => ({
  ...(model ? { model } : {}),
  layout: "policy-first",
  state: "charged twice for my order",
  questions: {
    team: {
      type: "choice",
      instructions: "Which team?",
      criteria: { billing: "Billing", technical: "Technical" },
    },
  },
});

interface Answer {
  model: string;
  answers: { team: { probabilities: Record<string, number>; extension?: Record<string, unknown> } };
}

interface Health {
  status: string;
  models: { name: string; sha256: string; prefix_cache: { hits: number; misses: number } }[];
}

const health = async () => (await (await fetch(`${server.url}/healthz`)).json()) as Health;

describe("an endpoint serving two models", () => {
  it("answers each by its name, the first also without a name and by its aliases", async () => {
    const large = await postJson(`${server.url}/v1/systemone`, request("large"));
    const small = await postJson(`${server.url}/v1/systemone`, request("small"));
    const unnamed = await postJson(`${server.url}/v1/systemone`, request());
    const alias = await postJson(`${server.url}/v1/systemone`, request("jev-latest"));
    expect([large.status, small.status, unnamed.status, alias.status]).toEqual([200, 200, 200, 200]);
    expect((large.json as Answer).model).toBe("large");
    for (const answer of [small, unnamed, alias]) expect((answer.json as Answer).model).toBe("small");
    // Different weights: the two models' distributions differ, the first's are the same however named.
    const p = (answer: { json: unknown }) => (answer.json as Answer).answers.team.probabilities;
    expect(p(large)).not.toEqual(p(small));
    expect(p(unnamed)).toEqual(p(small));
  });

  it("keeps a prefix cache per model: a request to one leaves the other's counts as they were", async () => {
    const before = await health();
    await postJson(`${server.url}/v1/systemone`, request("large"));
    const after = await health();
    const counts = (h: Health, name: string) => {
      const cache = h.models.find((m) => m.name === name)!.prefix_cache;
      return cache.hits + cache.misses;
    };
    expect(counts(after, "large")).toBe(counts(before, "large") + 1);
    expect(counts(after, "small")).toBe(counts(before, "small"));
    expect(after.models.map((m) => m.name)).toEqual(["small", "large"]);
    expect(after.models[0]!.sha256).not.toBe(after.models[1]!.sha256);
  });

  it("lists both models, and chooses by the chat model field", async () => {
    const list = (await (await fetch(`${server.url}/v1/models`)).json()) as {
      data: { id: string }[];
      models: { name: string; aliases: string[] }[];
    };
    expect(list.data.map((m) => m.id)).toEqual(["small", "large"]);
    expect(list.models[1]).toEqual({ name: "large", aliases: [], any_name_accepted: false });
    const chat = await postJson(`${server.url}/v1/chat/completions`, {
      model: "large",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 1,
    });
    expect(chat.status).toBe(200);
    expect((chat.json as { model: string }).model).toBe("large");
  });

  it("refuses a name it does not serve, naming the ones it does", async () => {
    const refused = await postJson(`${server.url}/v1/systemone`, request("huge"));
    expect(refused.status).toBe(422);
    const error = (refused.json as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("model_not_found");
    expect(error.message).toContain('"small", "large"');
    const chat = await postJson(`${server.url}/v1/chat/completions`, {
      model: "huge",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(chat.status).toBe(404);
  });
});

describe("--extra-model settings", () => {
  it("refuses an entry without a name and a name given twice", () => {
    expect(() => resolveServerConfig({ "extra-model": "model.gguf" }, {})).toThrow(ConfigError);
    expect(() => resolveServerConfig({}, { DECIDE_EXTRA_MODELS: "a=x.gguf,a=y.gguf" })).toThrow(/twice/);
    expect(resolveServerConfig({ "extra-model": ["a=x.gguf", "b=/models/y.gguf"] }, {}).extraModels).toEqual([
      { name: "a", path: "x.gguf" },
      { name: "b", path: "/models/y.gguf" },
    ]);
  });
});
