/**
 * The local stand-in for a SageMaker asynchronous endpoint, as the submit function reaches it
 * through `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`: `POST /endpoints/{name}/async-invocations` (what the
 * SDK's InvokeEndpointAsync sends: the input's `s3://` location in a header) answers 202 with the
 * inference id and where the answers will go, and queues the request. The queue is a folder in
 * the bucket's stand-in (`.async-endpoint/queue/`, one file per request), so it outlives a stop of
 * `npm start` as SageMaker's queue outlives a Lambda. Workers, one per "instance", take the
 * oldest request, stream its input object to the container's `/invocations` as JSONL (as the
 * async endpoint's sidecar does), stream the answers to `async/output/results/<id>.out`, and put
 * the success or error notification, as SNS would deliver it, on the notifications queue.
 *
 * The same runtime address serves the real-time endpoints too, as SageMaker's runtime does: a
 * `POST /endpoints/{other name}/invocations` (the result function asking a cascade's later tier,
 * as the decide function does) is passed to the container as it came.
 *
 * Two test seams stand for faults the container cannot produce on demand: `fail` makes an
 * invocation fail as a crashed container would, `rewriteAnswer` changes one answer line.
 */
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { asyncNotificationBody } from "../../shared/domain/async/async-notification.ts";
import { keyOfLocation, s3Location } from "../../shared/domain/async/async-objects.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";

/** The folder under the bucket stand-in that holds the queued requests. */
const QUEUE_FOLDER = ".async-endpoint/queue";

/** One queued request. */
interface QueuedRequest {
  readonly inferenceId: string;
  readonly inputLocation: string;
  readonly customAttributes?: string;
  readonly timeoutSeconds: number;
}

/** Options of {@link startLocalAsyncEndpoint}. */
export interface LocalAsyncEndpointOptions {
  /** The endpoint's name (requests for another name are refused). */
  readonly endpointName: string;
  /** The bucket stand-in's folder, and the bucket name its `s3://` locations use. */
  readonly folder: string;
  readonly bucket: string;
  /** The decision container's URL (its `/invocations`). */
  readonly containerUrl: string;
  /** Where the success and error notifications go (both topics feed one queue, as deployed). */
  readonly notifications: MessageQueue;
  /** Requests run at once (the instances). @default 1 */
  readonly instances?: number;
  /** Test seam: a reason makes this invocation fail as a crashed container's would. */
  readonly fail?: (inputKey: string, inferenceId: string) => string | undefined;
  /** Test seam: the answer line `index` of an invocation, changed. */
  readonly rewriteAnswer?: (inputKey: string, index: number, line: string) => string;
}

/** The running stand-in. */
export interface LocalAsyncEndpoint {
  /** Its URL: the submit function's `AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME`. */
  readonly url: string;
  /** Requests queued or running: the async backlog. */
  backlog(): Promise<number>;
  /** Invocations finished so far, and how many failed. */
  readonly stats: { completed: number; failed: number };
  stop(): Promise<void>;
}

/** Starts the server and its workers; requests left queued by an earlier run are run first. */
export async function startLocalAsyncEndpoint(
  options: LocalAsyncEndpointOptions,
): Promise<LocalAsyncEndpoint> {
  const queueFolder = join(options.folder, QUEUE_FOLDER);
  await mkdir(queueFolder, { recursive: true });
  const objects = new FsObjectStore(options.folder);
  const running = new Set<string>();
  const stats = { completed: 0, failed: 0 };
  let stopped = false;
  let wake: () => void = () => undefined;
  const server = createServer((request, response) => {
    accept(request, response, options, queueFolder)
      .then(() => wake())
      .catch((error: unknown) =>
        answer(response, 500, { __type: "InternalFailure", message: String(error) }),
      );
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const worker = async () => {
    while (!stopped) {
      const next = (await readdir(queueFolder))
        .sort()
        .find((name) => name.endsWith(".json") && !running.has(name));
      if (!next) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 200);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        continue;
      }
      running.add(next);
      try {
        const queued = JSON.parse(await readFile(join(queueFolder, next), "utf8")) as QueuedRequest;
        const ok = await invoke(queued, options, objects);
        stats[ok ? "completed" : "failed"]++;
        await rm(join(queueFolder, next), { force: true });
      } catch {
        // Left queued (the notification could not be sent): tried again, as SageMaker retries.
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        running.delete(next);
      }
    }
  };
  const workers = Array.from({ length: options.instances ?? 1 }, () => worker());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    backlog: async () => (await readdir(queueFolder)).filter((name) => name.endsWith(".json")).length,
    stats,
    async stop() {
      stopped = true;
      wake();
      server.close();
      server.closeAllConnections();
      await Promise.allSettled(workers);
    },
  };
}

/** Answers with a JSON body (and the error type header SageMaker's errors carry). */
function answer(response: ServerResponse, status: number, body: Record<string, unknown>, headers = {}): void {
  const errorType = typeof body.__type === "string" ? { "x-amzn-errortype": body.__type } : {};
  response.writeHead(status, { "content-type": "application/json", ...errorType, ...headers });
  response.end(JSON.stringify(body));
}

/** Queues an InvokeEndpointAsync request, or refuses it as SageMaker would. */
async function accept(
  request: IncomingMessage,
  response: ServerResponse,
  options: LocalAsyncEndpointOptions,
  queueFolder: string,
): Promise<void> {
  const realTime = /^\/endpoints\/([^/]+)\/invocations$/.exec(request.url ?? "");
  if (request.method === "POST" && realTime) return forward(request, response, options.containerUrl);
  const match = /^\/endpoints\/([^/]+)\/async-invocations$/.exec(request.url ?? "");
  if (request.method !== "POST" || !match)
    return answer(response, 404, { __type: "UnknownOperationException", message: `no route ${request.url}` });
  request.resume();
  if (decodeURIComponent(match[1]!) !== options.endpointName)
    return answer(response, 400, { __type: "ValidationError", message: `Endpoint ${match[1]} not found.` });
  const header = (name: string) => request.headers[`x-amzn-sagemaker-${name}`] as string | undefined;
  const inputLocation = header("inputlocation") ?? "";
  try {
    keyOfLocation(inputLocation, options.bucket);
  } catch (error) {
    return answer(response, 400, { __type: "ValidationError", message: (error as Error).message });
  }
  const inferenceId = header("inference-id") ?? crypto.randomUUID();
  const queued: QueuedRequest = {
    inferenceId,
    inputLocation,
    ...(header("custom-attributes") ? { customAttributes: header("custom-attributes")! } : {}),
    timeoutSeconds: Number(header("invocationtimeoutseconds") ?? ASYNC_LANE.invocationTimeoutSeconds),
  };
  // Named by arrival time, so the workers take the oldest first.
  await writeFile(
    join(queueFolder, `${Date.now().toString().padStart(15, "0")}-${inferenceId}.json`),
    JSON.stringify(queued),
  );
  answer(
    response,
    202,
    { InferenceId: inferenceId },
    {
      "x-amzn-sagemaker-outputlocation": s3Location(options.bucket, outputKey(inferenceId)),
      "x-amzn-sagemaker-failurelocation": s3Location(options.bucket, failureKey(inferenceId)),
    },
  );
}

/** Passes a real-time invocation to the container and its answer back. */
async function forward(
  request: IncomingMessage,
  response: ServerResponse,
  containerUrl: string,
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (
      typeof value === "string" &&
      (/^(content-type|accept)$/.test(name) || name.startsWith("x-amzn-sagemaker-"))
    )
      headers[name] = value;
  const answered = await fetch(`${containerUrl}${request.url}`, {
    method: "POST",
    headers,
    body: Readable.toWeb(request) as ReadableStream<Uint8Array>,
    duplex: "half",
  } as RequestInit);
  const passed: Record<string, string> = {};
  answered.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection")
      passed[name] = value;
  });
  response.writeHead(answered.status, passed);
  response.end(Buffer.from(await answered.arrayBuffer()));
}

const outputKey = (inferenceId: string) => `${ASYNC_LANE.prefixes.results}${inferenceId}.out`;
const failureKey = (inferenceId: string) => `${ASYNC_LANE.prefixes.failures}${inferenceId}-error.out`;

/** Runs one request against the container and notifies; true when it completed. */
async function invoke(
  queued: QueuedRequest,
  options: LocalAsyncEndpointOptions,
  objects: FsObjectStore,
): Promise<boolean> {
  const inputKey = keyOfLocation(queued.inputLocation, options.bucket);
  const notify = (end: Parameters<typeof asyncNotificationBody>[1]) =>
    options.notifications.send(asyncNotificationBody(options.endpointName, end, new Date()));
  const common = { inferenceId: queued.inferenceId, inputLocation: queued.inputLocation };
  const failed = async (reason: string) => {
    await objects.put(failureKey(queued.inferenceId), reason);
    await notify({ status: "failed", ...common, reason });
    return false;
  };
  const injected = options.fail?.(inputKey, queued.inferenceId);
  if (injected) return failed(injected);
  const input = join(objects.root, ...inputKey.split("/"));
  let response: Response;
  try {
    response = await fetch(`${options.containerUrl}/invocations`, {
      method: "POST",
      headers: {
        "content-type": ASYNC_LANE.contentType,
        accept: ASYNC_LANE.contentType,
        ...(queued.customAttributes ? { "x-amzn-sagemaker-custom-attributes": queued.customAttributes } : {}),
      },
      body: Readable.toWeb(createReadStream(input)) as ReadableStream<Uint8Array>,
      duplex: "half",
      signal: AbortSignal.timeout(queued.timeoutSeconds * 1000),
    } as RequestInit);
  } catch (error) {
    return failed(`ClientError: the model container could not be reached: ${(error as Error).message}`);
  }
  if (response.status !== 200 || !response.body) {
    const text = (await response.text()).slice(0, 500);
    return failed(
      `ClientError: Received server error (${response.status}) from model with message "${text}"`,
    );
  }
  await objects.putStream(outputKey(queued.inferenceId), answerLines(response.body, inputKey, options));
  await notify({
    status: "completed",
    ...common,
    outputLocation: s3Location(options.bucket, outputKey(queued.inferenceId)),
  });
  return true;
}

/** The container's answer lines as they stream in, through the test seam when one is set. */
async function* answerLines(
  body: ReadableStream<Uint8Array>,
  inputKey: string,
  options: LocalAsyncEndpointOptions,
): AsyncGenerator<string> {
  let index = 0;
  for await (const line of readLines(body as unknown as AsyncIterable<Uint8Array>, {
    maxLineBytes: 16 * 1024 * 1024,
  })) {
    const text = line.text ?? "";
    yield `${options.rewriteAnswer ? options.rewriteAnswer(inputKey, index, text) : text}\n`;
    index++;
  }
}
