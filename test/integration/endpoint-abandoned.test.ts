/**
 * Requests that leave, leave: clients that disconnect while queued stop counting against the
 * queue's bound at once and are never evaluated, so the next real client is admitted (not 503)
 * and served right after the running evaluation, on the real endpoint over loopback.
 */
import { describe, expect, it } from "vitest";
import { postJson, queueOf, SLOW_DECISION } from "../helpers/endpoint.ts";
import { useTestEndpoint } from "../helpers/use-endpoint.ts";

const endpoint = useTestEndpoint({ "queue-size": "16" });
const quick = { state: "refund", questions: { q: { type: "noul", instructions: "Refund?" } } };

describe("abandoned requests", () => {
  it("drops 50 vanished clients from the queue at once; the next real client is served", async () => {
    const server = endpoint();
    const queue = () => queueOf(server);
    const running = postJson(`${server.url}/v1/systemone`, SLOW_DECISION);
    // Wait until the slow request holds the model.
    while (!(await queue()).running) await new Promise((resolve) => setTimeout(resolve, 5));
    const vanished = Array.from({ length: 50 }, () => {
      const controller = new AbortController();
      const request = fetch(`${server.url}/v1/systemone`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(quick),
        signal: controller.signal,
      }).catch(() => "gone");
      return { controller, request };
    });
    // Let them reach the server (some are refused as queue_full: the bound is 16), then vanish.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const client of vanished) client.controller.abort();
    await Promise.all(vanished.map((client) => client.request));
    // The queue empties as soon as the server sees the closes, while the slow request still runs.
    let state = await queue();
    while (state.waiting > 0 && state.running) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      state = await queue();
    }
    // Held waiters would still fill the queue when the slow evaluation ends (it takes about a
    // hundred times longer than the server needs to see the closes).
    expect(state).toMatchObject({ waiting: 0, running: true });
    const real = await postJson(`${server.url}/v1/systemone`, quick);
    expect(real.status).toBe(200);
    expect((await running).status).toBe(200);
  });
});
