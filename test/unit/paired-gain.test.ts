/**
 * The paired test behind "never worse" (issue 40, finding 7): the gain is the mean of the
 * per-label NLL differences, its standard error is taken over groups (near-duplicates once), and
 * the critical ratio is the one-sided normal value at 1% over the candidates tried.
 */
import { describe, expect, it } from "vitest";
import { criticalRatio, pairedGain } from "../../shared/domain/calibration/paired-gain.ts";

const row = (p: number) => ({ probabilities: [p, 1 - p], label: 0 });

describe("the paired gain", () => {
  it("is the mean per-label NLL difference with the standard error of that mean", () => {
    const reference = [0.5, 0.5, 0.5, 0.5].map(row);
    const candidate = [0.6, 0.7, 0.4, 0.8].map(row);
    const d = candidate.map((c) => Math.log(c.probabilities[0]!) - Math.log(0.5));
    const mean = d.reduce((s, v) => s + v, 0) / 4;
    const sd = Math.sqrt(d.reduce((s, v) => s + (v - mean) ** 2, 0) / 3);
    const { gain, standardError } = pairedGain(reference, candidate, ["a", "b", "c", "d"]);
    expect(gain).toBeCloseTo(mean, 12);
    expect(standardError).toBeCloseTo(sd / 2, 12);
  });

  it("counts a group once: copies of one label do not shrink the standard error", () => {
    const reference = [0.5, 0.5].map(row);
    const candidate = [0.6, 0.4].map(row);
    const single = pairedGain(reference, candidate, ["a", "b"]);
    const copies = pairedGain(
      [...reference, ...reference],
      [...candidate, ...candidate],
      ["a", "b", "a", "b"],
    );
    expect(copies.gain).toBeCloseTo(single.gain, 12);
    expect(copies.standardError).toBeCloseTo(single.standardError, 12);
    expect(pairedGain(reference, candidate, ["a", "a"]).standardError).toBe(Number.POSITIVE_INFINITY);
  });

  it("asks for z at 1% divided by the candidates tried", () => {
    expect(criticalRatio(1)).toBeCloseTo(2.3263, 3);
    expect(criticalRatio(2)).toBeCloseTo(2.5758, 3);
    expect(criticalRatio(3)).toBeCloseTo(2.7131, 3);
  });
});
