import { describe, expect, it } from "vitest";
import { parseDuration } from "../../cli/duration.ts";

describe("decide replay durations", () => {
  it("reads seconds, minutes, hours and days", () => {
    expect(parseDuration("90s", "older-than")).toBe(90_000);
    expect(parseDuration("30m", "older-than")).toBe(1_800_000);
    expect(parseDuration("2h", "older-than")).toBe(7_200_000);
    expect(parseDuration("1.5d", "older-than")).toBe(129_600_000);
  });

  it("names the flag when it cannot read one", () => {
    expect(() => parseDuration("two hours", "newer-than")).toThrow(
      /--newer-than must look like 90s, 30m, 2h or 1d/,
    );
  });
});
