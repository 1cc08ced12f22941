/**
 * The pure part of option-order debiasing: which passes are scored and how they are combined.
 */
import { describe, expect, it } from "vitest";
import {
  combineLikelihoods,
  combinePasses,
  mapBack,
  optionPasses,
} from "../../endpoint/scorer/option-order.ts";
import { logSumExp } from "../../shared/domain/probability.ts";

describe("optionPasses", () => {
  it("keeps the declared order in one pass", () => {
    expect(optionPasses(["b", "a", "c"], "declared")).toEqual([[0, 1, 2]]);
  });

  it("rotates the canonical order, so every ordering of the same ids gets the same passes", () => {
    const passes = optionPasses(["b", "a", "c"], "cyclic");
    expect(passes).toEqual([
      [1, 0, 2],
      [0, 2, 1],
      [2, 1, 0],
    ]);
    const ids = ["b", "a", "c"];
    const shown = (order: string[]) => optionPasses(order, "cyclic").map((pass) => pass.map((i) => order[i]));
    expect(shown(["c", "b", "a"])).toEqual(shown(ids));
    // Each option is shown once at every position.
    for (let position = 0; position < 3; position++)
      expect(new Set(passes.map((pass) => pass[position])).size).toBe(3);
  });
});

describe("combinePasses", () => {
  it("returns one pass's logits unchanged, in declared order", () => {
    expect(combinePasses([[2, 0, 1]], [[5, 6, 7]])).toEqual([6, 7, 5]);
  });

  it("averages the log-probabilities each option got at every position", () => {
    // A pure position bias (+2 for whoever is first) on top of content logits 0, 1, -1.
    const content = [0, 1, -1];
    const passes = optionPasses(["x", "y", "z"], "cyclic");
    const logits = passes.map((pass) =>
      pass.map((declared, position) => content[declared]! + (position === 0 ? 2 : 0)),
    );
    const combined = combinePasses(passes, logits);
    const expected = content.map((c) => c - logSumExp(content)); // the bias cancels in differences
    const shift = combined[0]! - expected[0]!;
    for (const [i, value] of combined.entries()) expect(value - shift).toBeCloseTo(expected[i]!, 10);
    expect(combined[1]! - combined[0]!).toBeGreaterThan(0.5);
    expect(combined[0]! - combined[2]!).toBeGreaterThan(0.5);
  });

  it("refuses logits that do not match the passes", () => {
    expect(() => combinePasses([[0, 1]], [])).toThrow(RangeError);
  });
});

describe("combineLikelihoods", () => {
  it("maps each pass back before averaging, and is absent when a pass has none", () => {
    const passes = [
      [0, 1],
      [1, 0],
    ];
    const detail = (raw: number[]) => ({ likelihood: { raw, normalized: raw, tokens: [1, 2] } });
    const combined = combineLikelihoods(passes, [detail([-1, -2]), detail([-4, -3])]);
    expect(combined?.raw).toEqual([-2, -3]);
    expect(mapBack([1, 0], ["a", "b"])).toEqual(["b", "a"]);
    expect(combineLikelihoods(passes, [detail([0, 0]), {}])).toBeUndefined();
  });
});
