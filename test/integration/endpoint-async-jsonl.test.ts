/**
 * The container's asynchronous invocation (JSONL on `/invocations`) on the real endpoint and the
 * generated tiny model: one answer line per item in order, an item's error on its own line only,
 * the policy preamble evaluated once and reused for the object's later items, answers streamed
 * while the request is still being sent (so the container holds one line at a time, whatever the
 * object's size), and real-time JSON requests still refused past the body limit.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  // A small real-time body limit: an object far larger than it is still read, line by line.
  server = await startTestEndpoint({ "body-limit": "4096" });
}, 120_000);
afterAll(async () => {
  await server.close();
});

const requestLine = (i: number) =>
  JSON.stringify({
    state: `ticket ${i}: I was charged twice for order ${i * 7}`,
    layout: "policy-first",
    questions: {
      decision: {
        type: "choice",
        instructions: "Which team should handle this ticket? ".repeat(4),
        criteria: {
          billing: "Billing and refunds",
          technical: "Technical problems",
          account: "Account access",
        },
      },
    },
  });

type AnswerLine = {
  status: number;
  body: {
    answers?: { decision: { x_detail: { reused_tokens: number; input_tokens: number } } };
    error?: { code: string };
  };
};

const jsonl = { "content-type": "application/jsonlines" };

describe("asynchronous invocations (JSONL)", () => {
  it("answers every item on its own line, in order, an item's error alone, the preamble reused", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => requestLine(i));
    lines.splice(5, 0, '{"state": "x", "questions": ', ""); // a broken line, then a blank one (not an item)
    const body = `${lines.join("\n")}\n`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(4096);
    const response = await fetch(`${server.url}/invocations`, { method: "POST", headers: jsonl, body });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/jsonlines");
    const answers = (await response.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as AnswerLine);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 422, ...Array(7).fill(200)]);
    expect(answers[5]!.body.error?.code).toBe("invalid_json");
    const details = answers.filter((a) => a.status === 200).map((a) => a.body.answers!.decision.x_detail);
    // The policy's preamble (system text, question, options) comes first: each later item reuses it.
    for (const detail of details.slice(1)) expect(detail.reused_tokens).toBeGreaterThan(20);
  });

  it("streams: each item is answered before the next line is even sent", async () => {
    const url = new URL(`${server.url}/invocations`);
    const received: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: jsonl,
      });
      let sent = 0;
      const sendNext = () => {
        if (sent === 4) return void req.end();
        req.write(`${requestLine(sent++)}\n`);
      };
      req.on("response", (response) => {
        let pending = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          pending += chunk;
          for (let at = pending.indexOf("\n"); at >= 0; at = pending.indexOf("\n")) {
            received.push(pending.slice(0, at));
            pending = pending.slice(at + 1);
            // The answer to the line just sent arrived while the request is still open.
            expect(received.length).toBe(sent);
            sendNext();
          }
        });
        response.on("end", resolve);
        response.on("error", reject);
      });
      req.on("error", reject);
      req.flushHeaders();
      sendNext();
    });
    expect(received.map((l) => (JSON.parse(l) as AnswerLine).status)).toEqual([200, 200, 200, 200]);
  });

  it("keeps the real-time limits for a JSON request", async () => {
    const big = JSON.stringify({ batch: Array.from({ length: 12 }, (_, i) => JSON.parse(requestLine(i))) });
    const response = await fetch(`${server.url}/invocations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(response.status).toBe(413);
  });
});
