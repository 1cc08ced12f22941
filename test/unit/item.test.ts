/**
 * The item rules' messages name the field and what it needed (not zod's "Invalid input"), and an
 * item's state or metadata keeps a `__proto__` key as data, through the decide path to the
 * endpoint's request and the stored record, without touching any prototype.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { type Item, parseItem } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const problemsOf = (text: string) => {
  const parsed = parseItem(text);
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.field}: ${p.message}`);
};

describe("item messages", () => {
  it.each([
    ['{"policy":"p","state":"hi"}', "id: required, a non-empty string"],
    ['{"id":7,"policy":"p","state":"hi"}', "id: must be a non-empty string, got a number"],
    ['{"id":"a","state":"hi"}', "policy: required, the id of a policy"],
    ['{"id":"a","policy":"p","state":42}', "state: must be a string, an object or an array, got a number"],
    ['{"id":"a","policy":"p","state":null}', "state: must be a string, an object or an array, got null"],
    ['{"id":"a","policy":"p"}', "state: required, a string, an object or an array"],
    ['{"id":"a","policy":"p","state":"x","metadata":[1]}', "metadata: must be an object, got an array"],
    ['{"id":"a","policy":"p","state":"x","redecide":"yes"}', "redecide: must be true or false, got a string"],
    [
      '{"id":"a","policy":"p","state":"x","sate":"y"}',
      'item: unknown field "sate" (an item has id, policy, state, metadata, redecide, batchId)',
    ],
    ["[1, 2]", "item: must be a JSON object, got an array"],
  ])("%s: %s", (text, message) => {
    expect(problemsOf(text)).toEqual([message]);
  });
});

describe("a __proto__ key in an item", () => {
  const text =
    '{"id":"P-1","policy":"tickets","state":{"__proto__":{"admin":true},"body":"hi"},"metadata":{"__proto__":"m"}}';

  it("is kept as an own key of the state and the metadata, and no prototype changes", () => {
    const parsed = parseItem(text);
    expect(parsed.ok).toBe(true);
    const item = (parsed as { item: Item }).item;
    const state = item.state as Record<string, unknown>;
    expect(Object.keys(state)).toEqual(["__proto__", "body"]);
    expect(Object.getPrototypeOf(state)).toBe(Object.prototype);
    expect((state as { admin?: unknown }).admin).toBeUndefined();
    expect(Object.keys(item.metadata!)).toEqual(["__proto__"]);
    expect(JSON.parse(JSON.stringify(item))).toEqual(JSON.parse(text));
  });

  it("reaches the endpoint's request and the stored record", async () => {
    const seen: Item[] = [];
    const endpoint: DecidesItems = {
      async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
        seen.push(item);
        expect(JSON.stringify(systemOneRequest(item, policy).state)).toBe(
          '{"__proto__":{"admin":true},"body":"hi"}',
        );
        return {
          logits: [3, 0],
          allowedTokenMass: 0.9,
          modelSha256: "a".repeat(64),
          promptSha256: "b".repeat(64),
          promptVersion: "test@1",
          latencyMs: 1,
        };
      },
    };
    const store = new InMemoryDecisionStore();
    const outcome = await decideMessage(text, {
      policies: new PolicyRegistry([TEAMS_POLICY]),
      store,
      publisher: { publish: async () => undefined },
      endpoint,
      publishLeaseMs: 1000,
      now: () => new Date(Date.UTC(2026, 10, 30)),
    });
    expect(outcome).toMatchObject({ outcome: "decided" });
    expect(seen).toHaveLength(1);
    const record = await store.get({
      itemId: "P-1",
      policyId: TEAMS_POLICY.id,
      policyVersion: TEAMS_POLICY.version,
    });
    expect(JSON.stringify(record?.state)).toBe('{"__proto__":{"admin":true},"body":"hi"}');
  });
});

describe("a state whose only key is __proto__, and a __proto__ subtree (issue 36, observation 7)", () => {
  it("is an item like any other state with one key, as the endpoint's contract takes it", () => {
    // It was refused as "must not be empty": zod's copy of the state had dropped the key.
    const parsed = parseItem('{"id":"P-2","policy":"tickets","state":{"__proto__":{"admin":true}}}');
    expect(parsed.ok).toBe(true);
    expect(JSON.stringify((parsed as { item: Item }).item.state)).toBe('{"__proto__":{"admin":true}}');
  });

  it("gets the depth and 2^53 checks below the key, in the state and the metadata", () => {
    // They walked zod's copy, which had no __proto__ subtree to check.
    const deep = `${'{"a":'.repeat(40)}1${"}".repeat(40)}`;
    expect(problemsOf(`{"id":"P-3","policy":"tickets","state":{"__proto__":${deep}}}`)).toEqual([
      expect.stringMatching(/^state\.__proto__(\.a)+: is nested more than 32 levels deep$/),
    ]);
    expect(
      problemsOf(
        '{"id":"P-4","policy":"tickets","state":"x","metadata":{"__proto__":{"n":9007199254740993}}}',
      ),
    ).toEqual([
      "metadata.__proto__.n: integer 9007199254740992 is beyond ±2^53 and loses precision in JSON; send it as a string",
    ]);
  });
});
