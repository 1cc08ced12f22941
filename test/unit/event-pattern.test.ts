import { describe, expect, it } from "vitest";
import { InvalidPatternError, matchesPattern } from "../../shared/domain/event-pattern.ts";

const event = {
  source: "decision-pipeline",
  "detail-type": "Decision Made",
  detail: {
    route: "auto",
    policy: { id: "ticket-routing", version: 3 },
    chosen: "billing",
    confidence: 0.93,
    tags: ["vip", "eu"],
    reviewer: null,
    itemId: "TICKET-00042",
  },
};

const cases: [string, Record<string, unknown>, boolean][] = [
  ["exact string", { source: ["decision-pipeline"] }, true],
  ["exact string, other value", { source: ["other"] }, false],
  ["one of several values", { detail: { route: ["human", "auto"] } }, true],
  ["exact number", { detail: { policy: { version: [3] } } }, true],
  ["number is not its string", { detail: { policy: { version: ["3"] } } }, false],
  ["null", { detail: { reviewer: [null] } }, true],
  ["array value: any element", { detail: { tags: ["eu"] } }, true],
  ["array value: no element", { detail: { tags: ["us"] } }, false],
  ["prefix", { detail: { itemId: [{ prefix: "TICKET-" }] } }, true],
  ["prefix, no", { detail: { itemId: [{ prefix: "POST-" }] } }, false],
  ["prefix ignoring case", { detail: { itemId: [{ prefix: { "equals-ignore-case": "ticket-" } }] } }, true],
  ["suffix", { detail: { itemId: [{ suffix: "042" }] } }, true],
  ["suffix, no", { detail: { itemId: [{ suffix: "043" }] } }, false],
  ["anything-but value", { detail: { route: [{ "anything-but": "human" }] } }, true],
  ["anything-but value, equal", { detail: { route: [{ "anything-but": "auto" }] } }, false],
  [
    "anything-but list (as CDK renders it)",
    { detail: { route: [{ "anything-but": ["human", "rejected"] }] } },
    true,
  ],
  [
    "anything-but list containing it",
    { detail: { route: [{ "anything-but": ["auto", "rejected"] }] } },
    false,
  ],
  ["anything-but prefix", { detail: { chosen: [{ "anything-but": { prefix: "bill" } }] } }, false],
  ["anything-but suffix", { detail: { chosen: [{ "anything-but": { suffix: "xyz" } }] } }, true],
  ["anything-but on a missing field", { detail: { missing: [{ "anything-but": "x" }] } }, false],
  ["numeric range", { detail: { confidence: [{ numeric: [">=", 0.9, "<", 1] }] } }, true],
  ["numeric range, outside", { detail: { confidence: [{ numeric: ["<", 0.9] }] } }, false],
  ["numeric equals", { detail: { policy: { version: [{ numeric: ["=", 3] }] } } }, true],
  ["numeric on a string", { detail: { route: [{ numeric: [">", 0] }] } }, false],
  ["exists true", { detail: { chosen: [{ exists: true }] } }, true],
  ["exists true, absent", { detail: { label: [{ exists: true }] } }, false],
  ["exists false, absent", { detail: { label: [{ exists: false }] } }, true],
  ["exists false, present", { detail: { chosen: [{ exists: false }] } }, false],
  ["equals-ignore-case", { "detail-type": [{ "equals-ignore-case": "decision made" }] }, true],
  ["wildcard", { detail: { itemId: [{ wildcard: "TICKET-*2" }] } }, true],
  ["wildcard, no", { detail: { itemId: [{ wildcard: "POST-*" }] } }, false],
  ["wildcard treats dots literally", { source: [{ wildcard: "decision.pipeline" }] }, false],
  [
    "$or, one branch",
    { $or: [{ detail: { route: ["human"] } }, { detail: { confidence: [{ numeric: [">", 0.9] }] } }] },
    true,
  ],
  ["$or, no branch", { $or: [{ detail: { route: ["human"] } }, { source: ["x"] }] }, false],
  ["nested object on a missing field", { detail: { missing: { x: ["y"] } } }, false],
  ["all fields must match", { source: ["decision-pipeline"], detail: { route: ["human"] } }, false],
];

describe("matchesPattern", () => {
  for (const [name, pattern, expected] of cases) {
    it(`${name}: ${expected ? "matches" : "does not match"}`, () => {
      expect(matchesPattern(pattern, event)).toBe(expected);
    });
  }

  it("rejects malformed patterns clearly", () => {
    expect(() => matchesPattern({ source: "decision-pipeline" }, event)).toThrow(InvalidPatternError);
    expect(() => matchesPattern({ source: [] }, event)).toThrow(/empty list/);
    expect(() => matchesPattern({ detail: { confidence: [{ numeric: [">"] }] } }, event)).toThrow(/numeric/);
    expect(() => matchesPattern({ detail: { route: [{ unknownOp: 1 }] } }, event)).toThrow(
      /unknown operator/,
    );
    expect(() => matchesPattern({ $or: [{ source: ["x"] }] }, event)).toThrow(/two or more/);
  });

  it("matches IPv4 and IPv6 addresses by cidr", () => {
    const v4 = { detail: { ip: ["10.0.0.0/24"].map((cidr) => ({ cidr })) } };
    expect(matchesPattern(v4, { detail: { ip: "10.0.0.255" } })).toBe(true);
    expect(matchesPattern(v4, { detail: { ip: "10.0.1.0" } })).toBe(false);
    expect(matchesPattern(v4, { detail: { ip: "not an address" } })).toBe(false);
    const v6 = { detail: { ip: [{ cidr: "2001:db8::/32" }] } };
    expect(matchesPattern(v6, { detail: { ip: "2001:db8:ffff::1" } })).toBe(true);
    expect(matchesPattern(v6, { detail: { ip: "2001:db9::1" } })).toBe(false);
    expect(matchesPattern(v6, { detail: { ip: "10.0.0.1" } })).toBe(false);
    expect(matchesPattern({ ip: [{ cidr: "::ffff:10.0.0.0/120" }] }, { ip: "::ffff:10.0.0.7" })).toBe(true);
    expect(() => matchesPattern({ ip: [{ cidr: "10.0.0.0/33" }] }, { ip: "10.0.0.1" })).toThrow(
      InvalidPatternError,
    );
  });

  it("flattens arrays of objects as EventBridge does, each path over every element", () => {
    const event = {
      detail: {
        items: [
          { kind: "a", size: 1 },
          { kind: "b", size: 5 },
        ],
      },
    };
    expect(matchesPattern({ detail: { items: { kind: ["b"] } } }, event)).toBe(true);
    expect(matchesPattern({ detail: { items: { kind: ["c"] } } }, event)).toBe(false);
    // Two fields may match in different elements: EventBridge matches on flattened paths.
    expect(matchesPattern({ detail: { items: { kind: ["a"], size: [{ numeric: [">", 3] }] } } }, event)).toBe(
      true,
    );
    expect(matchesPattern({ detail: { items: { size: [{ exists: true }] } } }, event)).toBe(true);
    expect(matchesPattern({ detail: { items: { colour: [{ exists: false }] } } }, event)).toBe(true);
    // An object is not a leaf value; an empty array holds no value.
    expect(matchesPattern({ detail: { items: [{ exists: true }] } }, event)).toBe(false);
    expect(matchesPattern({ detail: { tags: [{ exists: false }] } }, { detail: { tags: [] } })).toBe(true);
  });
});
