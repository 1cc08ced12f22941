/**
 * The JSON scan that runs before JSON.parse, in slices (so a server can answer /ping between
 * them): sliced or whole, it finds the same repeated keys and key orders, escapes included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonScanSteps, scanJson } from "../../shared/domain/contracts/json-scan.ts";

function scanInSlices(text: string, sliceChars: number) {
  const steps = jsonScanSteps(text, 64, sliceChars);
  let stops = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { scan: step.value, stops };
    stops++;
  }
}

describe("the JSON scan", () => {
  it("finds repeated keys whose strings hold escaped quotes and backslashes", () => {
    const text = '{"a\\"b": 1, "c": "x\\\\", "a\\"b": 2, "d": {"e\\\\": [1, {"f": 1, "f": 2}]}}';
    const { duplicates, keys } = scanJson(text, 64);
    expect(duplicates).toEqual([
      { key: 'a"b', at: [] },
      { key: "f", at: ["d", "e\\", "1"] },
    ]);
    expect(keys.get("")).toEqual(['a"b', "c", 'a"b', "d"]);
  });

  it("stops between slices and finds the same as one pass", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 50 }), (value, slice) => {
        const text = JSON.stringify(value, null, slice % 3);
        expect(scanInSlices(text, slice).scan).toEqual(scanJson(text, 64));
      }),
      { numRuns: 300 },
    );
    // A long array of numbers (the body that once held the event loop) stops along the way.
    const numbers = JSON.stringify({ values: Array.from({ length: 10_000 }, (_, i) => i / 7) });
    expect(scanInSlices(numbers, 1000).stops).toBeGreaterThan(100);
  });
});
