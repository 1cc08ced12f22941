/**
 * Starts the endpoint: the model loads in the background while the server already answers
 * (503 until ready). SIGTERM: new and queued requests get 503 with Retry-After, running streams
 * end with an error chunk and [DONE], other in-flight requests finish within the grace period.
 */
import type { AddressInfo } from "node:net";
import { Logger } from "@aws-lambda-powertools/logger";
import { serve } from "@hono/node-server";
import { ShuttingDownError } from "./api-error.ts";
import { createApp } from "./app.ts";
import type { ServerConfig } from "./config.ts";
import { DecisionService } from "./decision-service.ts";

/** A started endpoint. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  readonly port: number;
  readonly service: DecisionService;
  /**
   * Refuses new requests, waits for in-flight ones (up to `graceMs`), then frees the model.
   * Safe to call twice.
   */
  close(graceMs?: number): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Structured logger. @default a Powertools logger named "decision-endpoint" at the configured level */
  readonly logger?: Logger;
}

/**
 * Starts the HTTP server and begins loading the model.
 *
 * @example
 * const server = await startServer(resolveServerConfig({ model: "tiny.gguf", port: "0" }, {}));
 * await server.service.ready;
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger =
    options.logger ?? new Logger({ serviceName: "decision-endpoint", logLevel: config.logLevel });
  let shuttingDown = false;
  const shutdown = new AbortController();
  const service = DecisionService.start(config, logger);
  const app = createApp({
    service,
    config,
    logger,
    isShuttingDown: () => shuttingDown,
    shutdownSignal: shutdown.signal,
  });
  const server = serve({ fetch: app.fetch, port: config.port, hostname: config.host });
  // Requests in flight, streams included (a response counts until its connection is done with it).
  let inFlight = 0;
  server.on(
    "request",
    (_request: unknown, response: { once(event: "close", listener: () => void): void }) => {
      inFlight++;
      response.once("close", () => inFlight--);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  logger.info("listening", { url, model: config.model });

  let closing: Promise<void> | undefined;
  const close = (graceMs = 30_000): Promise<void> => {
    closing ??= (async () => {
      // Keep listening through the grace period, so that new requests get 503 with Retry-After
      // rather than a refused connection; refuse the queued ones and end the streams at once.
      shuttingDown = true;
      shutdown.abort(new ShuttingDownError());
      logger.info("shutting down: finishing in-flight requests", { inFlight });
      const deadline = Date.now() + graceMs;
      while (inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      if ("closeAllConnections" in server) server.closeAllConnections();
      await stopped;
      await service.close();
      logger.info("stopped", { unfinished: inFlight });
    })();
    return closing;
  };
  return { url, port, service, close };
}
