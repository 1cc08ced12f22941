/**
 * Cheap checks first: a 5.8 MB state is refused as too long for the context before it is
 * tokenized, and /ping keeps answering while it arrives. The /ping latencies are printed (a
 * figure, never a pass/fail condition on this shared machine).
 */
import { describe, expect, it } from "vitest";
import { postJson } from "../helpers/endpoint.ts";
import { useTestEndpoint } from "../helpers/use-endpoint.ts";

const endpoint = useTestEndpoint();

describe("a huge state", () => {
  it("is refused before tokenizing, while /ping keeps answering", async () => {
    const state = "charged twice ".repeat(420_000); // 5.9 MB, under the 6 MB body limit
    let done = false;
    const pings: number[] = [];
    const pinger = (async () => {
      while (!done) {
        const started = performance.now();
        const response = await fetch(`${endpoint().url}/ping`);
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        pings.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const rssBefore = process.memoryUsage().rss;
    const response = await postJson(`${endpoint().url}/v1/systemone`, {
      state,
      questions: { q: { type: "noul", instructions: "Refund?" } },
    });
    done = true;
    await pinger;
    expect(response.status).toBe(422);
    expect((response.json as { error: { code: string; message: string } }).error).toMatchObject({
      code: "prompt_too_long",
      message: expect.stringMatching(/at least \d+ tokens/),
    });
    const sorted = [...pings].sort((a, b) => a - b);
    console.log(
      `/ping during a ${(state.length / 1e6).toFixed(1)} MB request: ${pings.length} pings, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms; RSS +${((process.memoryUsage().rss - rssBefore) / 1e6).toFixed(0)} MB`,
    );
    expect(pings.length).toBeGreaterThan(0);
  });
});
