/**
 * Shadow versions on the real decide path (in-memory store): an item in the shadow sample gets
 * the candidate's distribution and would-be route on its record, the live route and event are
 * exactly what they are without a shadow, share 0 costs no extra endpoint call, a failing
 * candidate never fails the live decision, and a candidate never decides.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import type { Item } from "../../shared/domain/item.ts";
import { type Policy, PolicyError, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { inShadowSample } from "../../shared/domain/shadow.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const live = (share: number): Policy => parsePolicy({ ...TEAMS_POLICY, shadow: { version: 2, share } });
// The candidate reads the same logits with a lower threshold: it would automate more.
const candidate = parsePolicy({ ...TEAMS_POLICY, version: 2, autoThreshold: 0.55, candidate: true });

/** Answers by item (its number sets the logits) and counts calls per policy version. */
class CountingEndpoint implements DecidesItems {
  readonly calls = new Map<number, number>();
  constructor(private readonly failVersion?: number) {}
  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    this.calls.set(policy.version, (this.calls.get(policy.version) ?? 0) + 1);
    if (policy.version === this.failVersion) throw new Error("candidate endpoint down");
    const n = Number(item.id.split("-")[1]);
    return {
      logits: [(n % 7) / 2, 0],
      allowedTokenMass: 0.9,
      modelSha256: "a".repeat(64),
      promptSha256: `${policy.version}`.repeat(64).slice(0, 64),
      promptVersion: "test@1",
      latencyMs: 1,
    };
  }
}

const ITEMS = Array.from({ length: 80 }, (_, i) => `T-${i}`);

async function decideAll(policies: Policy[], endpoint: CountingEndpoint) {
  const store = new InMemoryDecisionStore();
  const events: PipelineEvent[] = [];
  const deps = {
    policies: new PolicyRegistry(policies),
    store,
    endpoint,
    publisher: { publish: async (batch: readonly PipelineEvent[]) => void events.push(...batch) },
    publishLeaseMs: 1000,
    now: () => new Date("2026-11-30T10:00:00.000Z"),
  };
  const results = [];
  for (const id of ITEMS)
    results.push(
      await decideMessage(JSON.stringify({ id, policy: "tickets", state: "charged twice" }), deps),
    );
  const records = await Promise.all(ITEMS.map((itemId) => store.latest(itemId, "tickets")));
  return { results, records: records.map((r) => r!), events };
}

describe("shadow versions", () => {
  it("stores the candidate's distribution and would-be route on sampled items only", async () => {
    const { records } = await decideAll([live(0.5), candidate], new CountingEndpoint());
    const sampled = records.filter((r) => inShadowSample(r.itemId, live(0.5)));
    expect(sampled.length).toBeGreaterThan(20);
    expect(sampled.length).toBeLessThan(60);
    for (const r of records) {
      if (!sampled.includes(r)) {
        expect(r.shadow).toBeUndefined();
        continue;
      }
      expect(r.shadow).toMatchObject({ policyVersion: 2, chosen: r.chosen });
      expect(Object.keys(r.shadow!.distribution!)).toEqual(["billing", "technical"]);
      expect(r.shadow!.rawLogits).toEqual(r.rawLogits);
      expect(r.shadow!.route).toBe(r.shadow!.topProbability! >= 0.55 ? "auto" : "human");
    }
    // Where the threshold differs, the candidate would have routed some items otherwise.
    expect(sampled.some((r) => r.shadow!.route !== r.route)).toBe(true);
  });

  it("leaves the live route, record and events exactly as they are without a shadow", async () => {
    const without = await decideAll([TEAMS_POLICY], new CountingEndpoint());
    const withShadow = await decideAll([live(0.5), candidate], new CountingEndpoint());
    expect(withShadow.results).toEqual(without.results);
    expect(withShadow.events).toEqual(without.events);
    const { shadow: _, ...record } = withShadow.records[3]!;
    expect(record).toEqual(without.records[3]);
  });

  it("makes no extra endpoint call at share 0, and one per sampled item otherwise", async () => {
    const none = new CountingEndpoint();
    await decideAll([live(0), candidate], none);
    expect(Object.fromEntries(none.calls)).toEqual({ 1: ITEMS.length });
    const half = new CountingEndpoint();
    await decideAll([live(0.5), candidate], half);
    expect(half.calls.get(2)).toBe(ITEMS.filter((id) => inShadowSample(id, live(0.5))).length);
  });

  it("decides live items when the candidate cannot be scored, keeping why", async () => {
    const { results, records } = await decideAll([live(1), candidate], new CountingEndpoint(2));
    expect(results.every((r) => r.outcome === "decided")).toBe(true);
    for (const r of records)
      expect(r.shadow).toEqual({ policyVersion: 2, error: "Error: candidate endpoint down" });
  });

  it("never lets a candidate decide, and refuses a shadow that is not a candidate", () => {
    const registry = new PolicyRegistry([live(0.1), candidate]);
    expect(registry.current("tickets")?.version).toBe(1);
    expect(registry.shadowOf(registry.current("tickets")!)?.version).toBe(2);
    const notCandidate = parsePolicy({ ...TEAMS_POLICY, version: 2 });
    expect(() => new PolicyRegistry([live(0.1), notCandidate])).toThrow(
      new PolicyError('policy tickets@1: shadow version 2 is not marked "candidate": true'),
    );
    expect(() => new PolicyRegistry([live(0.1)])).toThrow(/shadow version 2 is not defined/);
    expect(() => parsePolicy({ ...TEAMS_POLICY, shadow: { version: 1, share: 0.1 } })).toThrow(
      /shadow\.version: must name another version than the policy's own/,
    );
  });
});
