/**
 * A cascade in the async lane (issue 41): the object's answer line stands for the first model
 * only, read by identity; what the first model passes on is asked of the later tier through the
 * real-time endpoints (`laterTiers`), as the live lane asks it, and the record keeps both tiers
 * as the live lane's does. Where no endpoint serves the later model, the item goes to people as
 * the first left it; a later tier that fails fails its item alone.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointUnavailableError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { settleNotification } from "../../shared/use-cases/async/async-results.ts";
import { honestAnswer, memoryLane, queuedTickets } from "../helpers/async-lane.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "async-cascade-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The teams policy with a second model, `large`, acting from 0.5. */
const CASCADE = parsePolicy({ ...TEAMS_POLICY, cascade: [{ model: "large", autoThreshold: 0.5 }] });

/** A later-tier endpoint that answers `[5, 0]` for the large model, or fails; the calls it got. */
function laterTier(options: { serves?: boolean; fail?: boolean } = {}) {
  const calls: { id: string; model: string | undefined }[] = [];
  const endpoint: DecidesItems = {
    serves: (model) => options.serves !== false && model === "large",
    async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
      calls.push({ id: item.id, model: policy.model });
      if (options.fail) throw new EndpointUnavailableError("the large model's endpoint timed out");
      return {
        logits: [5, 0],
        allowedTokenMass: 0.9,
        modelSha256: "b".repeat(64),
        promptSha256: "c".repeat(64),
        promptVersion: "v-large",
        latencyMs: 42,
      };
    },
  };
  return { endpoint, calls };
}

/** Submits i0 (sure: the first model acts) and u1 (unsure: passed on) and settles their object. */
async function run(later?: DecidesItems) {
  const l = memoryLane(root, new PolicyRegistry([CASCADE]), later);
  await l.submit(queuedTickets(["i0", "u1"]));
  // u1 is unsure: about 0.55 on its first option, below the first model's 0.8, above the second's 0.5.
  const answers = (lines: string[], requests: string[]) =>
    lines.map((line, i) =>
      requests[i]!.includes("ticket u1") ? honestAnswer(requests[i]!, [0.2, 0]) : line,
    );
  const result = await settleNotification(await l.answer(l.invocations[0]!, answers), l.results);
  return { l, result };
}

describe("a cascade in the async lane", () => {
  it("asks the later tier of what the first model passes on, and records both tiers as the live lane does", async () => {
    const later = laterTier();
    const { l, result } = await run(later.endpoint);
    expect(result.items).toMatchObject({ decided: 2 });
    expect(later.calls).toEqual([{ id: "u1", model: "large" }]);
    const passed = (await l.store.latest("u1", "tickets"))!;
    expect(passed.tiers).toHaveLength(2);
    // The first tier's answer is the object's verified line; the second the later endpoint's.
    expect(passed.tiers![0]).toMatchObject({ rawLogits: [0.2, 0], reason: "below_threshold" });
    expect(passed.tiers![1]).toMatchObject({ model: "large", rawLogits: [5, 0], latencyMs: 42 });
    expect(passed).toMatchObject({ route: "auto", modelSha256: "b".repeat(64) });
    const sure = (await l.store.latest("i0", "tickets"))!;
    expect(sure.tiers).toHaveLength(1);
    expect(sure.route).toBe("auto");
    const made = l.events.find((e) => e.detailType === "Decision Made" && e.detail.itemId === "u1");
    expect(made?.detail.tier).toEqual({ index: 2, model: "large" });
  });

  it("sends to people as the first model left it when no endpoint serves the later model", async () => {
    const later = laterTier({ serves: false });
    const { l } = await run(later.endpoint);
    expect(later.calls).toEqual([]);
    const passed = (await l.store.latest("u1", "tickets"))!;
    expect(passed).toMatchObject({ route: "human", reason: "below_threshold" });
    expect(passed.tiers).toHaveLength(1);
  });

  it("fails alone an item whose later tier fails, with the reason; the others are decided", async () => {
    const later = laterTier({ fail: true });
    const { l, result } = await run(later.endpoint);
    expect(result.items).toMatchObject({ decided: 1, resubmitted: 1 });
    expect(await l.store.latest("u1", "tickets")).toBeUndefined();
    expect(l.batch.queue.sent.map((body) => JSON.parse(body).id)).toEqual(["u1"]);
    expect((await l.store.failureOf("async|batch|u1"))?.reason).toMatch(/large model's endpoint timed out/);
  });
});
