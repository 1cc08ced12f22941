/**
 * A calibration map is declared once: every field of it (read from the cascade tier's schema) is a
 * field of the policy, a later tier's view of the policy carries the tier's own value of each and
 * none of the policy's, a proposal may change each on the policy and on every tier, and each has a
 * documented range apply checks it against. A field added to one place and missed in another
 * fails here by name.
 */
import { describe, expect, it } from "vitest";
import { mapOf } from "../../shared/domain/calibration/map.ts";
import { CALIBRATION_MAP_KEYS, PROBABILITY_MAP_KEYS } from "../../shared/domain/calibration/map-schema.ts";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
import { CALIBRATION_FIELDS, CALIBRATION_RANGES } from "../../shared/domain/calibration/ranges.ts";
import { tierPolicy } from "../../shared/domain/cascade.ts";
import { type Policy, parsePolicy, policySchema } from "../../shared/domain/policy/policy.ts";

const OPTIONS = 4;

/** The calibration map's fields, as a later tier of a cascade declares them (all but its model). */
const tierShape = policySchema.shape.cascade.unwrap().element.shape;
const MAP_KEYS = Object.keys(tierShape).filter((key) => key !== "model");

/** The schema of a map field. */
const schemaOf = (key: string) => tierShape[key as keyof typeof tierShape];

/** The documented range of a map field. */
function rangeOf(key: string): {
  readonly min: number;
  readonly max: number;
  readonly sumTolerance?: number;
} {
  const ranges = CALIBRATION_RANGES as Record<string, { min: number; max: number } | undefined>;
  const range = ranges[key];
  if (!range) throw new Error(`${key} has no documented range`);
  return range;
}

/** Whether a map field holds one value per option. */
const perOption = (key: string) => schemaOf(key).safeParse([rangeOf(key).max]).success;

/**
 * A valid value of a map field at `at` of its range (0: its floor, 1: its ceiling); a field whose
 * values sum to 1 leans toward the first option by `at`.
 */
function fieldValue(key: string, at: number): number | number[] {
  const { min, max, sumTolerance } = rangeOf(key);
  const value = min + (max - min) * at;
  if (!perOption(key)) return value;
  if (sumTolerance === undefined) return Array.from({ length: OPTIONS }, () => value);
  const first = 0.1 + 0.6 * at;
  return [first, ...Array.from({ length: OPTIONS - 1 }, () => (1 - first) / (OPTIONS - 1))];
}

/** A two-tier policy file with every map field set, the policy's near its ceilings, the tier's lower. */
function policyInput(tierAt = 0.25): Record<string, unknown> & { cascade: Record<string, unknown>[] } {
  const fields = (at: number) => Object.fromEntries(MAP_KEYS.map((key) => [key, fieldValue(key, at)]));
  return {
    id: "p",
    version: 1,
    question: "Which?",
    type: "choice",
    options: ["a", "b", "c", "d"].map((id) => ({ id, description: id, automate: true })),
    ...fields(0.75),
    model: "small",
    cascade: [{ model: "large", ...fields(tierAt) }],
  };
}

/** {@link policyInput}, parsed. */
const fullPolicy = (tierAt = 0.25): Policy => parsePolicy(policyInput(tierAt));

describe("the calibration map's fields", () => {
  it("are read from the tier's schema: the five a tier calibrates", () => {
    // A guard on this test itself: it checks something only while it finds the fields.
    expect(MAP_KEYS.length).toBeGreaterThanOrEqual(5);
    expect(MAP_KEYS).toContain("minAllowedTokenMass");
  });

  it("are the keys of the one calibration map schema, which the policy and the map proper read", () => {
    expect([...CALIBRATION_MAP_KEYS].sort()).toEqual([...MAP_KEYS].sort());
    for (const key of PROBABILITY_MAP_KEYS) expect(MAP_KEYS).toContain(key);
    const policy = fullPolicy();
    expect(Object.keys(mapOf(policy)).sort()).toEqual([...PROBABILITY_MAP_KEYS].sort());
  });

  it("are each a field of the policy, with a documented range, and a proposal may change each", () => {
    for (const key of MAP_KEYS) {
      expect(Object.keys(policySchema.shape), key).toContain(key);
      expect(() => rangeOf(key), key).not.toThrow();
      expect(CALIBRATION_FIELDS as readonly string[], key).toContain(key);
    }
  });

  it("each hold the tier's own value in the tier's view of the policy, never the policy's", () => {
    const policy = fullPolicy();
    const tier = policy.cascade![0]!;
    const view = tierPolicy(policy, 1);
    for (const key of MAP_KEYS) {
      expect(view[key as keyof Policy], key).toEqual(tier[key as keyof typeof tier]);
      expect(view[key as keyof Policy], key).not.toEqual(policy[key as keyof Policy]);
    }
    expect(view.model).toBe("large");
  });

  it("are not inherited from the policy where the tier leaves one out", () => {
    const policy = fullPolicy();
    // The fields a tier may leave out (not those with a default: the parsed tier has those).
    const optional = MAP_KEYS.filter((key) => {
      const parsed = schemaOf(key).safeParse(undefined);
      return parsed.success && parsed.data === undefined;
    });
    expect(optional.length).toBeGreaterThan(0);
    const bare = Object.fromEntries(
      Object.entries(policy.cascade![0]!).filter(([key]) => !optional.includes(key)),
    ) as NonNullable<Policy["cascade"]>[number];
    const view = tierPolicy({ ...policy, cascade: [bare] }, 1);
    for (const key of optional) expect(view, key).not.toHaveProperty(key);
  });

  it("each hold one entry per option where they hold one per option, on the policy and on each tier", () => {
    const arrays = MAP_KEYS.filter(perOption);
    expect(arrays.length).toBeGreaterThan(0);
    for (const key of arrays) {
      const short = (fieldValue(key, 0.5) as number[]).slice(1);
      expect(() => parsePolicy({ ...policyInput(), [key]: short }), key).toThrow(
        new RegExp(`: ${key}: needs one \\w+ per option \\(${OPTIONS}\\), got ${OPTIONS - 1}`),
      );
      const input = policyInput();
      const tiers = [{ ...input.cascade[0], [key]: short }];
      expect(() => parsePolicy({ ...input, cascade: tiers }), key).toThrow(
        new RegExp(`cascade\\.0\\.${key}: needs one value per option`),
      );
    }
  });

  it("may each be changed by a proposal on every tier, inside its range, and are refused outside it", () => {
    const current = fullPolicy();
    const moved = fullPolicy(0.5);
    const check = checkProposal(current, moved);
    expect(check.refusals).toEqual([]);
    for (const key of MAP_KEYS) {
      const { max } = rangeOf(key);
      const outside = perOption(key) ? Array.from({ length: OPTIONS }, () => max * 2 + 1) : max * 2 + 1;
      const tier = { ...current.cascade![0]!, [key]: outside };
      const refusals = checkProposal(current, { ...current, cascade: [tier] }).refusals;
      expect(refusals, key).toHaveLength(1);
      expect(refusals[0], key).toMatch(new RegExp(`^cascade\\.0\\.${key}: .*outside the documented range`));
    }
  });
});
