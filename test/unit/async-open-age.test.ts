/**
 * The submit function's age of each lane's oldest open object (`functions/async-open-age.ts`),
 * the metric the alarms on objects open too long read: the oldest per lane, nothing for a lane
 * with nothing open, and each data point carrying its lane beside the service.
 */
import { Metrics } from "@aws-lambda-powertools/metrics";
import { describe, expect, it, vi } from "vitest";
import { emitOldestOpenAges, oldestOpenAges } from "../../functions/async-open-age.ts";

const at = (iso: string) => Date.parse(iso);

describe("the oldest open object per lane", () => {
  it("gives each lane the age of its oldest open object and leaves out a lane with none", () => {
    const open = [
      { source: "batch" as const, submittedAt: "2027-01-01T00:00:00.000Z" },
      { source: "batch" as const, submittedAt: "2027-01-01T01:00:00.000Z" },
      { source: "intake" as const, submittedAt: "2027-01-01T01:59:00.000Z" },
    ];
    const ages = oldestOpenAges(open, at("2027-01-01T02:00:00.000Z"));
    expect(Object.fromEntries(ages)).toEqual({ batch: 7200, intake: 60 });
    expect(oldestOpenAges(open.slice(0, 1), at("2027-01-01T02:00:00.000Z")).has("intake")).toBe(false);
  });

  it("emits one metric per lane with the lane dimension", () => {
    const metrics = new Metrics({ namespace: "DecisionPipeline", serviceName: "async-submit" });
    const singles: { dimensions: Record<string, string>; name: string; value: number }[] = [];
    vi.spyOn(metrics, "singleMetric").mockImplementation(() => {
      const single = { dimensions: {} as Record<string, string>, name: "", value: 0 };
      singles.push(single);
      return {
        addDimension: (name: string, value: string) => {
          single.dimensions[name] = value;
        },
        addMetric: (name: string, _unit: unknown, value: number) => {
          single.name = name;
          single.value = value;
        },
      } as unknown as Metrics;
    });
    emitOldestOpenAges(
      metrics,
      [{ source: "intake", submittedAt: "2027-01-01T00:00:00.000Z" }],
      at("2027-01-01T00:30:00.000Z"),
    );
    expect(singles).toEqual([
      { dimensions: { lane: "intake" }, name: "AsyncOldestOpenObjectAgeSeconds", value: 1800 },
    ]);
  });
});
