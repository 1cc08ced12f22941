/**
 * Model names as the clients of the services we replace send them: the served name, the System
 * One SDK default (`jev-latest`), names given with --model-alias, and with --any-model whatever
 * an OpenAI client's user configured; responses always report the real served name. Unknown
 * names: 422 on System One, OpenAI's 404 model_not_found on chat. `/v1/models` answers in both
 * list shapes. And `decide serve` on a model that cannot load exits 1 with the reason.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { InvokeEndpointCommand, SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { postJson, startTestEndpoint } from "../helpers/endpoint.ts";
import { REPO_ROOT } from "../helpers/models.ts";

let strict: RunningServer;
let open: RunningServer;

beforeAll(async () => {
  strict = await startTestEndpoint({ "model-alias": "tickets-v1,router" });
  open = await startTestEndpoint({ "any-model": "true" });
}, 120_000);

afterAll(async () => {
  await strict?.close();
  await open?.close();
});

const decision = (model: string) => ({
  model,
  state: "charged twice",
  questions: { refund: { type: "noul", instructions: "Refund?" } },
});

describe("model names", () => {
  it("accepts the served name, the System One default alias and configured aliases, reporting the real name", async () => {
    for (const model of ["tiny", "jev-latest", "tickets-v1", "router"]) {
      const response = await postJson(`${strict.url}/v1/systemone`, decision(model));
      expect(response.status, model).toBe(200);
      expect((response.json as { model: string }).model).toBe("tiny");
    }
  });

  it("answers a System One request with the Jev alias through the SageMaker runtime client", async () => {
    const client = new SageMakerRuntimeClient({
      endpoint: strict.url,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      maxAttempts: 1,
    });
    const output = await client.send(
      new InvokeEndpointCommand({
        EndpointName: "decisions",
        ContentType: "application/json",
        Body: JSON.stringify(decision("jev-latest")),
      }),
    );
    const body = JSON.parse(new TextDecoder().decode(output.Body)) as { model: string; answers: object };
    expect(body.model).toBe("tiny");
    expect(Object.keys(body.answers)).toEqual(["refund"]);
    client.destroy();
  });

  it("refuses unknown names: 422 on System One, 404 model_not_found on chat", async () => {
    const systemOne = await postJson(`${strict.url}/v1/systemone`, decision("gpt-4o-mini"));
    expect(systemOne.status).toBe(422);
    expect((systemOne.json as { error: { param: string; code: string } }).error).toMatchObject({
      param: "model",
      code: "model_not_found",
    });
    const client = new OpenAI({ baseURL: `${strict.url}/v1`, apiKey: "local", maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
  });

  it("accepts any name with --any-model, as llama.cpp's server does", async () => {
    const client = new OpenAI({ baseURL: `${open.url}/v1`, apiKey: "local", maxRetries: 0 });
    for (const model of ["gpt-4o-mini", "default"]) {
      const completion = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 2,
      });
      expect(completion.model).toBe("tiny");
    }
    expect((await postJson(`${open.url}/v1/systemone`, decision("anything"))).status).toBe(200);
  });

  it("lists the model in both shapes: OpenAI's data and System One's models", async () => {
    const body = (await (await fetch(`${strict.url}/v1/models`)).json()) as {
      object: string;
      data: { id: string }[];
      models: { name: string; aliases: string[] }[];
    };
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(["tiny"]);
    expect(body.models).toEqual([
      { name: "tiny", aliases: ["jev-latest", "tickets-v1", "router"], any_name_accepted: false },
    ]);
  });
});

describe("decide serve at a terminal", () => {
  it("exits 1 with the reason when the model cannot be loaded", async () => {
    const run = promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, "bin", "decide.js"),
        "serve",
        "--model",
        join(REPO_ROOT, "missing.gguf"),
        "--port",
        "0",
      ],
      { cwd: REPO_ROOT },
    );
    const error = (await run.catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(1);
    expect(error.stderr).toMatch(/missing\.gguf/);
  }, 60_000);
});
