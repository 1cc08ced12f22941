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

describe("a 5.8 MB array of numbers", () => {
  // Issue 36, observation 5: reading and checking such a body held the event loop for 8-9 s
  // (a path string built per number, then the garbage collector), so /ping went unanswered
  // and SageMaker would take the instance out of service. Asserted on the shape of the answers,
  // not on a millisecond figure: the pings must keep coming while the request is worked on,
  // with no silence that covers most of it.
  it("leaves /ping answering while it is read and validated", async () => {
    const values = Array.from({ length: 700_000 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e3);
    const body = JSON.stringify({
      state: { values },
      questions: { q: { type: "choice", instructions: "Which?", criteria: { a: "A", b: "B" } } },
    });
    expect(body.length).toBeGreaterThan(5_500_000);
    let done = false;
    const answered: number[] = [];
    const pinger = (async () => {
      while (!done) {
        const response = await fetch(`${endpoint().url}/ping`);
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        answered.push(performance.now());
      }
    })();
    // A first answer, so the pinger runs before the request goes out.
    while (answered.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const sent = performance.now();
    const response = await postJson(`${endpoint().url}/invocations`, body);
    const received = performance.now();
    done = true;
    await pinger;
    expect(response.status).toBe(422);
    const during = answered.filter((t) => t > sent && t < received);
    const marks = [sent, ...during, received];
    const longestSilence = Math.max(...marks.slice(1).map((t, i) => t - marks[i]!));
    const took = received - sent;
    console.log(
      `/ping during a ${(body.length / 1e6).toFixed(1)} MB number array: ${during.length} answered in ${took.toFixed(0)} ms, longest silence ${longestSilence.toFixed(0)} ms`,
    );
    // The bar: /ping answers within a second during any accepted request. A silence under a second
    // meets it whatever its share: on a quiet machine the request takes a few hundred ms, most of
    // it JSON.parse, which runs in one piece (a clean-clone run saw 178 of 268 ms). On a loaded
    // machine the request takes seconds and a silence is judged against it: pings keep coming and
    // none covers 60% of the request (before the fix one silence covered 97% of it, 2,924 ms).
    expect(
      longestSilence < 1000 || (during.length >= 3 && longestSilence < 0.6 * took),
      `longest silence ${longestSilence.toFixed(0)} ms of ${took.toFixed(0)} ms, ${during.length} pings answered`,
    ).toBe(true);
  });
});
