/**
 * A test endpoint for one test file, started before its tests and closed after them. Kept apart
 * from `endpoint.ts` because it needs vitest's hooks, and the benchmarks import that file.
 */
import { afterAll, beforeAll } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { startTestEndpoint } from "./endpoint.ts";

/**
 * Starts an endpoint for the file's tests (before all) and closes it (after all); the returned
 * function gives the running server.
 */
export function useTestEndpoint(flags: Record<string, string> = {}): () => RunningServer {
  let server: RunningServer | undefined;
  beforeAll(async () => {
    server = await startTestEndpoint(flags);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error("the test endpoint has not started");
    return server;
  };
}
