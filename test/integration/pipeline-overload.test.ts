/**
 * Overload waits, it does not fail, on the real local services: the real endpoint on the tiny
 * model admits two requests at a time (one running, a queue of 1) while four decide pollers keep
 * five items each in flight, ten times what it serves. Refused items (503 `queue_full`) go back
 * to the local SQS with a growing visibility backoff, counting as no failure: every item is
 * decided exactly once (one record, one event), none is dead-lettered although the failure limit
 * is 1 (a refusal counted as a failure would dead-letter its item at once), and the intake
 * drains. The budgets come from the endpoint's latency measured at start-up, and the test fails
 * when an item is dead-lettered or no item is decided for a long stretch (a multiple of that
 * latency plus the longest backoff), never on a wall-clock deadline.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { EndpointOverloadedError } from "../../shared/domain/errors.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { type GateProxy, startGateProxy } from "../helpers/gate-proxy.ts";
import { type LocalPipeline, sendBodies, startLocalPipeline } from "../helpers/local-pipeline.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { type Budgets, budgetsFor, measureLatency } from "../helpers/progress.ts";

const ITEMS = 60;
const POLLERS = 4;
const BATCH = 5;
// Short waits, so refused items keep coming back into the crowd until they are decided.
const BACKOFF = { firstSeconds: 1, maxSeconds: 2 };
let pipeline: LocalPipeline;
let budgets: Budgets;
let gate: GateProxy | undefined;
/** Refusals by item id, seen by an observer around the real endpoint client. */
const refusals = new Map<string, number>();

beforeAll(async () => {
  pipeline = await startLocalPipeline({
    queueSize: 1,
    pollers: POLLERS,
    batchSize: BATCH,
    maxItemFailures: 1,
    overloadBackoff: BACKOFF,
    endpointUrl: async (real) => {
      const policy = parsePolicy(
        JSON.parse(readFileSync(join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json"), "utf8")),
      );
      const body = systemOneRequest({ id: "probe", policy: policy.id, state: "charged twice" }, policy);
      // An admitted call waits behind at most one item per item it carries; the floor keeps a
      // latency spike on a busy machine from timing a call out (a real failure, here fatal).
      const latencyMs = Math.max(2000, await measureLatency(`${real}/invocations`, body, 4));
      budgets = budgetsFor(latencyMs, { concurrentRequests: 2 * BATCH });
      // The pollers' first calls meet at the endpoint together, however fast it is.
      gate = await startGateProxy(real, POLLERS, budgets.latencyMs);
      return gate.url;
    },
    endpointTimeoutMs: () => budgets.endpointTimeoutMs,
    visibilityTimeoutSeconds: () => budgets.visibilityTimeoutSeconds,
    publishLeaseMs: () => budgets.publishLeaseMs,
    wrap: (deps) => ({
      ...deps,
      endpoint: {
        decide: (item, policy) =>
          deps.endpoint.decide(item, policy).catch((error: unknown) => {
            if (error instanceof EndpointOverloadedError)
              refusals.set(item.id, (refusals.get(item.id) ?? 0) + 1);
            throw error;
          }),
      },
    }),
  });
}, 300_000);

afterAll(async () => {
  await pipeline?.stop();
  await gate?.stop();
});

/** Items with a "Decision Made" event so far. */
const decidedIds = () =>
  new Set(
    pipeline.bus.events
      .filter((e) => e["detail-type"] === "Decision Made")
      .map((e) => e.detail.itemId as string),
  );

/**
 * Waits until every item is decided, failing at once when one is dead-lettered, and otherwise
 * only when none was decided for `stallMs`.
 */
async function waitForDecisions(stallMs: number): Promise<void> {
  let last = 0;
  let lastChange = Date.now();
  for (;;) {
    const decided = decidedIds().size;
    if (decided >= ITEMS) return;
    const deadLetters = await pipeline.deadLetters.depth();
    if (deadLetters.visible > 0)
      throw new Error(`${deadLetters.visible} items dead-lettered (${decided} of ${ITEMS} decided)`);
    if (decided > last) {
      last = decided;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) {
      const depth = await pipeline.intake.depth();
      throw new Error(
        `no item decided for ${stallMs} ms: ${decided} of ${ITEMS} decided, intake ${JSON.stringify(depth)}, ` +
          `${[...refusals.values()].reduce((a, b) => a + b, 0)} refusals, pollers ${JSON.stringify(pipeline.pollers.map((p) => p.stats))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("pipeline under overload", () => {
  it("decides every item exactly once with no dead letter when flooded with ten times what the endpoint serves", async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => ({
      id: `FLOOD-${String(i).padStart(3, "0")}`,
      policy: "ticket-routing",
      state: `ticket ${i}: charged twice, please refund`,
    }));
    await sendBodies(
      pipeline.intake,
      items.map((item) => JSON.stringify(item)),
    );
    // A lull covers the longest backoff twice and a hundred items' worth of endpoint time.
    await waitForDecisions(2 * BACKOFF.maxSeconds * 1000 + 100 * budgets.latencyMs);
    await pipeline.bus.idle();

    const made = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made");
    const total = [...refusals.values()].reduce((a, b) => a + b, 0);
    const mostRefused = Math.max(0, ...refusals.values());
    console.log(
      `overload: ${ITEMS} items, ${POLLERS} pollers x ${BATCH} items against an admission of 2; ` +
        `${total} refusals (${refusals.size} items refused at least once, at most ${mostRefused} times); ` +
        `${gate?.itemsPerCall().length} calls; latency budget ${budgets.latencyMs.toFixed(0)} ms; pollers ${JSON.stringify(pipeline.pollers.map((p) => p.stats))}`,
    );
    // Each poller is one execution environment with its own endpoint client, so a call carries
    // one invocation's records at most: a client shared by the pollers merged them into calls of
    // ten, two calls matched the admission of two, and the flood overloaded nothing (seen on CI).
    const sizes = gate?.itemsPerCall() ?? [];
    expect(sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(BATCH);
    // The flood really overloaded the endpoint: most items were refused, some several times.
    expect(refusals.size).toBeGreaterThan(0);
    // Exactly once: one event and one published record per item, nothing else.
    expect(made.map((e) => e.detail.itemId).sort()).toEqual(items.map((item) => item.id));
    const policy = pipeline.deps.policies.current("ticket-routing")!;
    for (const item of items) {
      const record = await pipeline.deps.store.latest(item.id, policy.id);
      expect(record?.eventPublished, item.id).toBe(true);
      expect(["auto_approved", "pending_review"]).toContain(record?.status);
      expect(record?.policyVersion).toBe(policy.version);
    }
    expect(pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Rejected")).toEqual([]);
    // Nothing dead-lettered, and the intake drained (local counts include messages in flight).
    expect(await pipeline.deadLetters.depth()).toEqual({ visible: 0, inFlight: 0 });
    expect(await pipeline.intake.depth()).toEqual({ visible: 0, inFlight: 0 });
  }, 1_800_000);
});
