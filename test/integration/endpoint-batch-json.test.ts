/**
 * Batched invocations (`{"batch": [...]}`) read as JSON: a key repeated inside one item refuses
 * that item alone, with the error a single call would have had, and every other item is read as
 * a single call would read it (its option ids in document order, a `__proto__` key kept).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestEndpoint();
});
afterAll(async () => {
  await server.close();
});

const QUESTIONS = {
  team: {
    type: "choice",
    instructions: "Which team?",
    criteria: { billing: "Billing", technical: "Technical" },
  },
};

describe("batched invocations as JSON", () => {
  it("refuses only the item that repeats a key, and reads the others as single calls would", async () => {
    const good = JSON.stringify({ state: "a refund please", questions: QUESTIONS });
    // Integer-like option ids and a __proto__ key in the state: written by hand, in this order.
    const ordered =
      '{"state":{"__proto__":{"x":1},"body":"refund"},"questions":{"team":{"type":"choice",' +
      '"instructions":"Which team?","criteria":{"2":"Billing","1":"Technical"}}}}';
    const repeated = `{"state":"x","state":"y","questions":${JSON.stringify(QUESTIONS)}}`;
    const post = (path: string, body: string) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
    const response = await post("/invocations", `{"batch":[${good},${repeated},${ordered}]}`);
    expect(response.status).toBe(200);
    const text = await response.text();
    const { results } = JSON.parse(text) as {
      results: { status: number; body: { error?: { message: string; param?: string } } }[];
    };
    expect(results.map((r) => r.status)).toEqual([200, 422, 200]);
    expect(results[1]!.body.error).toMatchObject({
      message: 'duplicate key "state" in the same object',
      param: "state",
    });
    // The wire text shows the option order (JSON.parse would put integer-like keys first).
    const probabilities = (body: string) => [...body.matchAll(/"probabilities":\{[^}]*\}/g)].map((m) => m[0]);
    const alone = probabilities(await (await post("/v1/systemone", ordered)).text());
    expect(alone[0]).toMatch(/^"probabilities":\{"2":[0-9.e-]+,"1":/);
    expect(probabilities(text).at(-1)).toBe(alone[0]);
    // A key repeated outside the items is the call's own mistake.
    expect((await post("/invocations", `{"batch":[${good}],"batch":[${good}]}`)).status).toBe(422);
  });
});
