/**
 * Starts the real decision endpoint in-process on a free loopback port, on the generated tiny model.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { type RunningServer, startServer } from "../../endpoint/server/server.ts";
import { generatedModel } from "./models.ts";

/** Starts an endpoint with `flags` (as `decide serve` takes them) and waits until it is ready. */
export async function startTestEndpoint(flags: Record<string, string> = {}): Promise<RunningServer> {
  const config = resolveServerConfig(
    {
      model: await generatedModel(),
      port: "0",
      host: "127.0.0.1",
      threads: "2",
      gpu: "off",
      "context-size": "2048",
      ...flags,
    },
    {},
  );
  const server = await startServer(config, {
    logger: new Logger({ serviceName: "test-endpoint", logLevel: "SILENT" }),
  });
  await server.service.ready;
  return server;
}

/**
 * A SageMaker runtime client pointed at `server` through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME, as
 * the pipeline's client is (the variable is read when the client is built); one try per call.
 * The caller deletes the variable and destroys the client when done.
 */
export function runtimeClientFor(server: RunningServer): SageMakerRuntimeClient {
  process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME = server.url;
  return new SageMakerRuntimeClient({
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });
}

/** POSTs JSON (or raw text) and returns status, headers and parsed body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A System One request that keeps the model busy for a while: 64 questions, each re-reading a long state. */
export const SLOW_DECISION = {
  layout: "policy-first",
  token_mass: true,
  state: "charged twice for my order ".repeat(40),
  questions: Object.fromEntries(
    Array.from({ length: 64 }, (_, i) => [
      `q${i}`,
      { type: "noul", instructions: `Is statement ${i} true?` },
    ]),
  ),
};

/** The endpoint's queue as /healthz reports it. */
export async function queueOf(server: RunningServer): Promise<{ waiting: number; running: boolean }> {
  const health = (await (await fetch(`${server.url}/healthz`)).json()) as {
    queue: { waiting: number; running: boolean };
  };
  return health.queue;
}
