/**
 * The container's answer lines say what they answer (issue 41): on the real endpoint and the
 * generated tiny model, each answer line of an asynchronous invocation carries the SHA-256 of the
 * request line it scored and echoes the line's `x_item`, which is taken off before the strict
 * System One request is read; a line without one is answered with its hash only, and a line that
 * is not JSON still says which line it was. The async lane matches answers to items by these.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestEndpoint();
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const request = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...extra,
    state: `ticket ${i}: I was charged twice`,
    questions: {
      decision: {
        type: "choice",
        instructions: "Which team?",
        criteria: { billing: "Billing", technical: "Technical" },
      },
    },
  });

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

describe("asynchronous answer lines carry their identity", () => {
  it("echoes x_item and the hash of the line scored, in any order the lines come", async () => {
    const lines = [
      request(0, { x_item: { id: "T-0", n: 0 } }),
      request(1),
      "{not json",
      request(2, { x_item: { id: "T-2", n: 2 } }),
    ];
    const response = await fetch(`${server.url}/invocations`, {
      method: "POST",
      headers: { "content-type": "application/jsonlines" },
      body: `${lines.join("\n")}\n`,
    });
    expect(response.status).toBe(200);
    const answers = (await response.text())
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text) as { status: number; x_item?: unknown; x_request_sha256?: string });
    expect(answers.map((a) => a.x_request_sha256)).toEqual(lines.map(sha256));
    expect(answers.map((a) => a.x_item)).toEqual([
      { id: "T-0", n: 0 },
      undefined,
      undefined,
      { id: "T-2", n: 2 },
    ]);
    expect([answers[0]!.status, answers[1]!.status, answers[3]!.status]).toEqual([200, 200, 200]);
    expect(answers[2]!.status).toBeGreaterThanOrEqual(400);
  }, 120_000);
});
