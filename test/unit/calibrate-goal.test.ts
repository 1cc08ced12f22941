/**
 * `decide calibrate` takes one threshold goal. Before, `--max-auto-error 0.02 --target-accuracy
 * 0.9` certified the first and ignored the second without a word.
 */
import { describe, expect, it } from "vitest";
import { UsageError } from "../../cli/args.ts";
import { goalOf } from "../../cli/calibrate/calibrate-goal.ts";

describe("goalOf", () => {
  it("reads each goal alone", () => {
    expect(goalOf({ "max-auto-error": "0.02" })).toEqual({
      kind: "max-auto-error",
      maxError: 0.02,
      confidence: 0.95,
    });
    expect(goalOf({ "target-accuracy": "0.9" })).toEqual({ kind: "target-accuracy", accuracy: 0.9 });
    expect(goalOf({ "cost-wrong": "10", "cost-review": "1" })).toEqual({
      kind: "cost",
      wrongAutomatic: 10,
      humanReview: 1,
    });
    expect(goalOf({})).toEqual({ kind: "target-accuracy", accuracy: 0.97 });
  });

  it("refuses two goals at once, naming both", () => {
    expect(() => goalOf({ "max-auto-error": "0.02", "target-accuracy": "0.9" })).toThrow(
      new UsageError("give one threshold goal: --max-auto-error or --target-accuracy, not both"),
    );
    expect(() => goalOf({ "target-accuracy": "0.9", "cost-wrong": "10", "cost-review": "1" })).toThrow(
      /--target-accuracy or --cost-wrong\/--cost-review, not both/,
    );
  });
});
