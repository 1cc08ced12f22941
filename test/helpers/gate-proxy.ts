/**
 * A proxy in front of the real decision endpoint that holds the first calls until `hold` of them
 * have arrived, then lets them through together: on a quiet machine a fast endpoint may finish
 * one poller's call before the next poller's arrives, and a flood would never meet the
 * admission queue. Nothing is answered by the proxy itself except a 502 when the endpoint cannot
 * be reached; every error is handled. A call that waits longer than `maxWaitMs` goes on alone, so
 * a test that sends fewer calls never hangs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A running gate. */
export interface GateProxy {
  readonly url: string;
  /** Calls held at the gate before it opened. */
  readonly held: () => number;
  /** The number of items each invocation call carried, in arrival order. */
  readonly itemsPerCall: () => readonly number[];
  stop(): Promise<void>;
}

/** The request headers the endpoint reads (the rest are the proxy's own connection's). */
const FORWARDED = ["content-type", "accept", "x-amzn-sagemaker-custom-attributes"];

/** Starts the gate in front of `target`. */
export async function startGateProxy(target: string, hold: number, maxWaitMs: number): Promise<GateProxy> {
  const waiting: (() => void)[] = [];
  let open = false;
  let held = 0;
  const sizes: number[] = [];
  const wait = () =>
    new Promise<void>((resolve) => {
      held++;
      waiting.push(resolve);
      if (waiting.length >= hold) {
        open = true;
        for (const release of waiting.splice(0)) release();
      } else setTimeout(resolve, maxWaitMs);
    });
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method === "POST" && req.url?.endsWith("/invocations"))
      sizes.push(itemsIn(Buffer.concat(chunks)));
    if (!open && req.method === "POST") await wait();
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    try {
      const upstream = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}),
      });
      const body = Buffer.from(await upstream.arrayBuffer());
      const out: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection")
          out[name] = value;
      });
      res.writeHead(upstream.status, out).end(body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`gate proxy: ${(error as Error).message}`);
    }
  };
  const server = createServer((req, res) => {
    forward(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => held,
    itemsPerCall: () => sizes,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const release of waiting.splice(0)) release();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Items in a request body: the length of a `{"batch":[…]}` call, else 1 (unreadable bodies too). */
function itemsIn(body: Buffer): number {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { batch?: unknown };
    return Array.isArray(parsed.batch) ? parsed.batch.length : 1;
  } catch {
    return 1;
  }
}
