/**
 * Validation that keeps every key, on the real endpoint: `__proto__` and `constructor` as option
 * ids or question keys, integer-like ids answered in the order sent, ids that collide after
 * trimming refused naming both, and bodies nested 10,000 deep refused with a 422 naming the
 * depth, never a 500.
 */
import { describe, expect, it } from "vitest";
import { postJson } from "../helpers/endpoint.ts";
import { useTestEndpoint } from "../helpers/use-endpoint.ts";

const endpoint = useTestEndpoint();

const url = () => `${endpoint().url}/v1/systemone`;

/** The keys of the first object after `"name":` in raw JSON text, in the order written. */
function keysAfter(text: string, name: string): string[] {
  const start = text.indexOf(`"${name}":{`) + name.length + 4;
  const keys: string[] = [];
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}") {
      if (depth === 0) break;
      depth--;
    } else if (text[i] === '"' && depth === 0) {
      const end = text.indexOf('"', i + 1);
      if (text[end + 1] === ":") keys.push(text.slice(i + 1, end));
      i = end;
    }
  }
  return keys;
}

describe("keys", () => {
  it("keeps __proto__ and constructor as option ids and question keys", async () => {
    const body =
      '{"state":"x","questions":{"__proto__":{"type":"choice","instructions":"Pick","criteria":{"__proto__":"A","constructor":"B","toString":"C"}},' +
      '"constructor":{"type":"noul","instructions":"True?"}}}';
    const response = await postJson(url(), body);
    expect(response.status).toBe(200);
    expect(keysAfter(response.text, "answers").filter((k) => !k.startsWith("x_") && k !== "type")).toEqual(
      expect.arrayContaining(["__proto__", "constructor"]),
    );
    expect(keysAfter(response.text, "probabilities")).toEqual(["__proto__", "constructor", "toString"]);
  });

  it("answers integer-like ids in the order they were sent", async () => {
    const response = await postJson(
      url(),
      '{"state":"x","questions":{"q":{"type":"choice","instructions":"Pick","criteria":{"2":"two","1":"one","b":"bee"}}}}',
    );
    expect(response.status).toBe(200);
    expect(keysAfter(response.text, "probabilities")).toEqual(["2", "1", "b"]);
    expect(keysAfter(response.text, "logits")).toEqual(["2", "1", "b"]);
  });

  it("refuses ids that are the same after trimming, naming both", async () => {
    const response = await postJson(url(), {
      state: "x",
      questions: { q: { type: "choice", instructions: "Pick", criteria: { " a": "A", a: "B" } } },
    });
    expect(response.status).toBe(422);
    expect((response.json as { error: { message: string } }).error.message).toMatch(/" a" and "a"/);
  });

  it("refuses a state or instruction nested 10,000 deep with a 422 naming the depth", async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    for (const body of [
      `{"state":${deep},"questions":{"q":{"type":"noul","instructions":"True?"}}}`,
      `{"state":"x","questions":{"q":{"type":"noul","instructions":${deep}}}}`,
    ]) {
      const response = await postJson(url(), body);
      expect(response.status).toBe(422);
      expect((response.json as { error: { message: string } }).error.message).toMatch(
        /nested more than 64 levels/,
      );
    }
    // The server is still well.
    expect((await fetch(`${endpoint().url}/ping`)).status).toBe(200);
  });
});
