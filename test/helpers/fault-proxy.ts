/**
 * A proxy in front of the real decision endpoint that fails a share of calls the ways SageMaker
 * does (model error 424, 503, throttling 429, hangs past the client's timeout) or answers 200 with
 * a body that breaks the System One contract, since the real endpoint cannot fail on demand.
 * Bodies whose state mentions POISON always fail, as a container that crashes on them would
 * (model error 500: a failure of the item, where a 503 or 429 only means a busy endpoint). Every error of its own (the endpoint
 * unreachable, a client gone) is answered or ignored, never left as an unhandled rejection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SeededRandom } from "../../shared/domain/random.ts";

/** Counts of what the proxy did. */
export interface FaultCounts {
  forwarded: number;
  modelError: number;
  unavailable: number;
  throttled: number;
  hung: number;
  malformed: number;
  poison: number;
  /** Calls the proxy could not forward (answered 502). */
  proxyErrors: number;
}

/** A running proxy. */
export interface FaultProxy {
  readonly url: string;
  readonly counts: FaultCounts;
  /** Turns the POISON failures on or off (off: the "fix" before a replay). */
  setPoison(enabled: boolean): void;
  stop(): Promise<void>;
}

/** Starts the proxy; `failureRate` is the share of calls failed, split evenly over the five kinds. */
export async function startFaultProxy(
  target: string,
  failureRate: number,
  hangMs: number,
  seed = 7,
): Promise<FaultProxy> {
  const random = new SeededRandom(seed);
  let poisonEnabled = true;
  const counts: FaultCounts = {
    forwarded: 0,
    modelError: 0,
    unavailable: 0,
    throttled: 0,
    hung: 0,
    malformed: 0,
    poison: 0,
    proxyErrors: 0,
  };
  const timers = new Set<NodeJS.Timeout>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const fail = (status: number, type: string, payload: object) => {
      if (response.headersSent || response.destroyed) return;
      response.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": type });
      response.end(JSON.stringify(payload));
    };
    if (poisonEnabled && body.includes("POISON")) {
      counts.poison++;
      fail(424, "ModelError", {
        __type: "ModelError",
        message: "poison",
        OriginalStatusCode: 500,
        OriginalMessage: "crash on poison",
      });
      return;
    }
    const draw = random.nextFloat();
    if (draw < failureRate) {
      const kind = Math.floor((draw / failureRate) * 5);
      if (kind === 0) {
        counts.modelError++;
        fail(424, "ModelError", {
          __type: "ModelError",
          message: "injected",
          OriginalStatusCode: 500,
          OriginalMessage: "crash",
        });
      } else if (kind === 1) {
        counts.unavailable++;
        fail(503, "ServiceUnavailable", { __type: "ServiceUnavailable", message: "injected" });
      } else if (kind === 2) {
        counts.throttled++;
        fail(429, "ThrottlingException", { __type: "ThrottlingException", message: "injected" });
      } else if (kind === 3) {
        counts.hung++;
        const timer = setTimeout(() => {
          timers.delete(timer);
          fail(504, "ModelError", { __type: "ModelError", message: "late", OriginalStatusCode: 504 });
        }, hangMs);
        timers.add(timer);
      } else {
        // A 200 whose logits are strings: a broken container that must never be acted on.
        counts.malformed++;
        const upstream = await forward(request, body);
        const json = JSON.parse(Buffer.from(await upstream.arrayBuffer()).toString("utf8")) as {
          answers?: Record<string, { x_detail?: { logits?: Record<string, unknown> } }>;
        };
        for (const answer of Object.values(json.answers ?? {})) {
          const logits = answer.x_detail?.logits ?? {};
          for (const id of Object.keys(logits)) logits[id] = String(logits[id]);
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(json));
      }
      return;
    }
    counts.forwarded++;
    const upstream = await forward(request, body);
    const headers: Record<string, string> = {};
    upstream.headers.forEach((value, key) => {
      if (key !== "content-length" && key !== "transfer-encoding" && key !== "connection")
        headers[key] = value;
    });
    const answer = Buffer.from(await upstream.arrayBuffer());
    if (response.destroyed) return;
    response.writeHead(upstream.status, headers);
    response.end(answer);
  };
  const forward = (request: IncomingMessage, body: string) =>
    fetch(`${target}${request.url}`, {
      method: request.method,
      headers: { "content-type": String(request.headers["content-type"] ?? "application/json") },
      body,
    });
  const server: Server = createServer((request, response) => {
    // The client may be gone (its timeout) and the endpoint may refuse: answer 502 or drop it.
    response.on("error", () => undefined);
    handle(request, response).catch((error: unknown) => {
      counts.proxyErrors++;
      fail502(response, error);
    });
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    setPoison: (enabled) => {
      poisonEnabled = enabled;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function fail502(response: ServerResponse, error: unknown): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(502, { "content-type": "application/json", "x-amzn-errortype": "ServiceUnavailable" });
  response.end(JSON.stringify({ __type: "ServiceUnavailable", message: `proxy: ${String(error)}` }));
}
