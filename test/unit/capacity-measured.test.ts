/**
 * The measured per-item times the capacity model runs on: the file `npm run bench:cost` writes
 * reads back the same, instance speed follows physical cores, and instances with no measured
 * figure (a GPU) or no price are refused by name.
 */
import { describe, expect, it } from "vitest";
import { UnknownCapacityError } from "../../infra/capacity/errors.ts";
import {
  instanceSecondsPerItem,
  MEASURED_TIMES,
  measuredTimesJson,
  serverlessSecondsPerItem,
} from "../../infra/capacity/measured-times.ts";

describe("measured per-item times", () => {
  it("hold positive seconds measured on a known core count", () => {
    expect(MEASURED_TIMES.secondsPerItem.fresh).toBeGreaterThan(MEASURED_TIMES.secondsPerItem.preambleCached);
    expect(MEASURED_TIMES.secondsPerItem.preambleCached).toBeGreaterThan(0);
    expect(instanceSecondsPerItem(MEASURED_TIMES.referenceInstance, "fresh")).toBe(
      MEASURED_TIMES.secondsPerItem.fresh,
    );
  });

  it("scale with physical cores, and serverless memory sizes get their assumed speed", () => {
    const xlarge = instanceSecondsPerItem("ml.c6i.xlarge", "fresh");
    expect(instanceSecondsPerItem("ml.c6i.2xlarge", "fresh")).toBeCloseTo(xlarge / 2, 12);
    expect(instanceSecondsPerItem("ml.c6i.large", "preambleCached")).toBeCloseTo(
      2 * instanceSecondsPerItem("ml.c6i.xlarge", "preambleCached"),
      12,
    );
    expect(serverlessSecondsPerItem(2048, "fresh")).toBeCloseTo(
      2 * serverlessSecondsPerItem(4096, "fresh"),
      12,
    );
  });

  it("refuses a GPU instance and an unpriced one by name", () => {
    expect(() => instanceSecondsPerItem("ml.g5.xlarge", "fresh")).toThrow(
      /GPU instance: no decision time was measured/,
    );
    expect(() => instanceSecondsPerItem("ml.m5.xlarge", "fresh")).toThrow(UnknownCapacityError);
    expect(() => serverlessSecondsPerItem(3072, "fresh")).toThrow(/no assumed speed for serverless 3072 MB/);
  });

  it("writes a file that reads back the same, to the millisecond", () => {
    const text = measuredTimesJson({
      ...MEASURED_TIMES,
      secondsPerItem: { fresh: 1.54649, preambleCached: 0.2712 },
    });
    expect(JSON.parse(text)).toEqual({
      ...MEASURED_TIMES,
      secondsPerItem: { fresh: 1.546, preambleCached: 0.271 },
    });
    expect(() =>
      measuredTimesJson({ ...MEASURED_TIMES, secondsPerItem: { fresh: 0, preambleCached: 1 } }),
    ).toThrow(/fresh/);
  });
});
