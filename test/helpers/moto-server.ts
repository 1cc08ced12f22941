/**
 * moto (`moto_server`, a Python AWS emulator installed on these machines) for the deploy-day
 * tests: start one on a free loopback port, wait until it answers, and speak the few APIs those
 * tests need without an SDK client of their own (CloudFormation's query API, CloudWatch Logs' JSON
 * API, S3's REST API). moto checks no signature, only the service named in the credential scope.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { freePort } from "./local-pipeline.ts";

/** Whether `moto_server` is installed (the tests that need it skip, saying so, when it is not). */
export const motoAvailable = spawnSync("moto_server", ["--help"]).status === 0;

/** The region and account moto answers for. */
export const MOTO_REGION = "us-east-1";
export const MOTO_ACCOUNT = "123456789012";

/** A running moto_server: its URL, and stop (safe to call twice). */
export interface Moto {
  readonly endpoint: string;
  stop(): void;
}

/**
 * Starts moto_server on a free loopback port; resolves once it answers, rejects if it exits. Its
 * stderr (each request and any traceback) is shown when MOTO_DEBUG is set.
 */
export async function startMoto(): Promise<Moto> {
  const port = await freePort();
  const child: ChildProcess = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", process.env.MOTO_DEBUG ? "inherit" : "ignore"],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    const ok = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { endpoint, stop: () => child.kill() };
}

/** Empties every service of the running moto (its own API), as a fresh account. */
export async function resetMoto(moto: Moto): Promise<void> {
  const response = await fetch(`${moto.endpoint}/moto-api/reset`, { method: "POST" });
  if (!response.ok) throw new MotoError(response.status, await response.text());
}

const authorization = (service: string) =>
  `AWS4-HMAC-SHA256 Credential=moto/20260101/${MOTO_REGION}/${service}/aws4_request, SignedHeaders=host, Signature=0`;

/** An AWS error as moto answered it: the HTTP status and the body (XML or JSON). */
export class MotoError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`moto answered ${status}: ${body.slice(0, 600)}`);
    this.name = "MotoError";
  }
}

/** A CloudFormation query-API call; the XML answer, or a MotoError. */
export async function cloudFormation(
  moto: Moto,
  action: string,
  params: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(`${moto.endpoint}/`, {
    method: "POST",
    headers: {
      authorization: authorization("cloudformation"),
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ Action: action, Version: "2010-05-15", ...params }).toString(),
  });
  const body = await response.text();
  if (!response.ok) throw new MotoError(response.status, body);
  return body;
}

/** Every value of `<tag>` in an XML answer, in order. */
export const xmlValues = (xml: string, tag: string): string[] =>
  [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((m) => m[1]!);

/** A JSON-protocol call (`target` as `X-Amz-Target`, e.g. `Logs_20140328.CreateLogGroup`). */
export async function awsJson<T = Record<string, unknown>>(
  moto: Moto,
  service: string,
  target: string,
  body: Record<string, unknown>,
): Promise<T> {
  const response = await fetch(`${moto.endpoint}/`, {
    method: "POST",
    headers: {
      authorization: authorization(service),
      "content-type": "application/x-amz-json-1.1",
      "x-amz-target": target,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new MotoError(response.status, text);
  return (text ? JSON.parse(text) : {}) as T;
}

/** An S3 REST call, path style (`/bucket` or `/bucket/key`); the answer's text. */
export async function s3(moto: Moto, method: string, path: string, body?: Uint8Array): Promise<string> {
  const response = await fetch(`${moto.endpoint}${path}`, {
    method,
    headers: { authorization: authorization("s3") },
    ...(body ? { body } : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new MotoError(response.status, text);
  return text;
}
