/**
 * A proxy in front of the real decision endpoint that fails a share of calls the ways SageMaker
 * does (model error 424, 503, throttling 429, hangs past the client's timeout), since the real
 * endpoint cannot fail on demand. Bodies whose state mentions POISON always fail.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SeededRandom } from "../../shared/random.ts";

/** Counts of what the proxy did. */
export interface FaultCounts {
  forwarded: number;
  modelError: number;
  unavailable: number;
  throttled: number;
  hung: number;
  poison: number;
}

/** A running proxy. */
export interface FaultProxy {
  readonly url: string;
  readonly counts: FaultCounts;
  /** Turns the POISON failures on or off (off: the "fix" before a replay). */
  setPoison(enabled: boolean): void;
  stop(): Promise<void>;
}

/** Starts the proxy; `failureRate` is the share of calls failed, split evenly over the four kinds. */
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
    poison: 0,
  };
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const fail = (status: number, type: string, payload: object) => {
      response.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": type });
      response.end(JSON.stringify(payload));
    };
    if (poisonEnabled && body.includes("POISON")) {
      counts.poison++;
      fail(503, "ServiceUnavailable", { __type: "ServiceUnavailable", message: "poison" });
      return;
    }
    const draw = random.nextFloat();
    if (draw < failureRate) {
      const kind = Math.floor((draw / failureRate) * 4);
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
      } else {
        counts.hung++;
        setTimeout(
          () => fail(504, "ModelError", { __type: "ModelError", message: "late", OriginalStatusCode: 504 }),
          hangMs,
        );
      }
      return;
    }
    counts.forwarded++;
    const upstream = await fetch(`${target}${request.url}`, {
      method: request.method,
      headers: { "content-type": String(request.headers["content-type"] ?? "application/json") },
      body,
    });
    const headers: Record<string, string> = {};
    upstream.headers.forEach((value, key) => {
      if (key !== "content-length" && key !== "transfer-encoding" && key !== "connection")
        headers[key] = value;
    });
    response.writeHead(upstream.status, headers);
    response.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    setPoison: (enabled) => {
      poisonEnabled = enabled;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
