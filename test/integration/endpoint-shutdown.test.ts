/**
 * Shutdown as SageMaker and clients need it, on the real endpoint: after close() starts, a new
 * request gets 503 with Retry-After (not a refused connection), a queued one gets 503, a running
 * stream ends with an error chunk and [DONE], and a running non-streaming request finishes within
 * a grace derived from its measured time.
 */
import { describe, expect, it } from "vitest";
import { postJson, SLOW_DECISION, startTestEndpoint } from "../helpers/endpoint.ts";

describe("shutdown", () => {
  it("refuses new and queued requests with 503, ends streams cleanly, finishes running requests", async () => {
    const server = await startTestEndpoint({ "queue-size": "8" });
    const health = async () =>
      (
        (await (await fetch(`${server.url}/healthz`)).json()) as {
          queue: { waiting: number; running: boolean };
        }
      ).queue;
    // A stream holds the model first; a slow decision and a quick one wait behind it.
    const stream = fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        messages: [{ role: "user", content: "Tell me a story" }],
        max_tokens: 4000,
        stream: true,
      }),
    });
    while (!(await health()).running) await new Promise((resolve) => setTimeout(resolve, 5));
    const queued = postJson(`${server.url}/v1/systemone`, SLOW_DECISION);
    while ((await health()).waiting < 1) await new Promise((resolve) => setTimeout(resolve, 5));

    const closed = server.close(30_000);
    const refused = await postJson(`${server.url}/v1/systemone`, SLOW_DECISION);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((refused.json as { error: { code: string } }).error.code).toBe("shutting_down");

    const waiting = await queued;
    expect(waiting.status).toBe(503);
    expect((waiting.json as { error: { code: string } }).error.code).toBe("shutting_down");

    const text = await (await stream).text();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    expect(JSON.parse(events.at(-2)!)).toMatchObject({ error: { code: "shutting_down" } });
    await closed;
  }, 120_000);

  it("lets a running non-streaming request finish", async () => {
    const server = await startTestEndpoint();
    // The grace comes from this machine's own time for the request (measured once, warm), with
    // room for a busier moment: a fixed grace would cut the request off on a loaded machine.
    const started = performance.now();
    expect((await postJson(`${server.url}/v1/systemone`, SLOW_DECISION)).status).toBe(200);
    const graceMs = Math.max(30_000, 20 * (performance.now() - started));
    const running = postJson(`${server.url}/v1/systemone`, SLOW_DECISION);
    for (;;) {
      const queue = ((await (await fetch(`${server.url}/healthz`)).json()) as { queue: { running: boolean } })
        .queue;
      if (queue.running) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const closed = server.close(graceMs);
    expect((await running).status).toBe(200);
    await closed;
  }, 600_000);
});
