import { describe, expect, it } from "vitest";
import { argmax, confidence, expectedLevel, logSumExp, softmax } from "../../shared/domain/probability.ts";

describe("softmax", () => {
  it("matches a hand-computed distribution", () => {
    const p = softmax([Math.log(1), Math.log(2), Math.log(5)]);
    expect(p[0]).toBeCloseTo(0.125, 12);
    expect(p[1]).toBeCloseTo(0.25, 12);
    expect(p[2]).toBeCloseTo(0.625, 12);
  });

  it("does not overflow on large logits and ignores a common shift", () => {
    const shifted = softmax([1000, 1001]);
    const plain = softmax([0, 1]);
    expect(shifted[0]).toBeCloseTo(plain[0]!, 12);
    expect(shifted[1]).toBeCloseTo(plain[1]!, 12);
  });

  it("divides logits by the temperature without changing the argmax", () => {
    const logits = [0.3, 2.1, -1, 1.9];
    const hot = softmax(logits, 4);
    const cold = softmax(logits, 0.25);
    expect(argmax(hot)).toBe(1);
    expect(argmax(cold)).toBe(1);
    expect(Math.max(...hot)).toBeLessThan(Math.max(...softmax(logits)));
    expect(Math.max(...cold)).toBeGreaterThan(Math.max(...softmax(logits)));
    expect(hot[0]).toBeCloseTo(Math.exp(0.3 / 4) / logits.reduce((s, l) => s + Math.exp(l / 4), 0), 12);
  });

  it("rejects a temperature that is not positive and finite", () => {
    expect(() => softmax([1, 2], 0)).toThrow(/temperature/);
    expect(() => softmax([1, 2], Number.NaN)).toThrow(/temperature/);
    expect(() => softmax([1, 2], Number.POSITIVE_INFINITY)).toThrow(/temperature/);
  });

  it("gives zero to an option whose logit is -Infinity", () => {
    expect(softmax([0, Number.NEGATIVE_INFINITY])).toEqual([1, 0]);
  });
});

describe("logSumExp", () => {
  it("equals log of the sum of exponentials", () => {
    expect(logSumExp([1, 2, 3])).toBeCloseTo(Math.log(Math.E + Math.E ** 2 + Math.E ** 3), 12);
    expect(logSumExp([])).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe("confidence", () => {
  it("is 0 for a uniform distribution and 1 for a certain one", () => {
    expect(confidence([0.25, 0.25, 0.25, 0.25])).toBe(0);
    expect(confidence([0, 1, 0])).toBe(1);
  });

  it("follows (n · max p − 1) / (n − 1)", () => {
    expect(confidence([0.7, 0.2, 0.1])).toBeCloseTo((3 * 0.7 - 1) / 2, 12);
    expect(confidence([0.6, 0.4])).toBeCloseTo(0.2, 12);
  });
});

describe("expectedLevel", () => {
  it("is Σ i · p_i", () => {
    expect(expectedLevel([0.1, 0.2, 0.3, 0.4])).toBeCloseTo(0 * 0.1 + 1 * 0.2 + 2 * 0.3 + 3 * 0.4, 12);
  });
});
