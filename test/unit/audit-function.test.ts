/**
 * The daily Audit function: each policy's estimate from its audit samples of the window before
 * the scheduled time, published as metrics (the verdict's bounds and state where the policy sets a
 * budget, the rate only where there is a label to rest on), and the results it returns and logs.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAuditHandler } from "../../functions/audit.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { scheduledEvent } from "../helpers/scheduled-event.ts";

const AT = "2026-11-30T06:00:00.000Z";
const scheduled = scheduledEvent(AT);

/** Metric name and policy of every EMF line written while `run` runs, with its value. */
async function emitted(
  run: () => Promise<unknown>,
): Promise<{ name: string; policy: string; value: number }[]> {
  process.env.POWERTOOLS_METRICS_DISABLED = "false";
  const lines: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  await run();
  vi.restoreAllMocks();
  return lines
    .join("")
    .split("\n")
    .filter((line) => line.includes('"CloudWatchMetrics"'))
    .flatMap((line) => {
      const emf = JSON.parse(line) as Record<string, unknown> & {
        _aws: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] };
      };
      return emf._aws.CloudWatchMetrics.flatMap((d) =>
        d.Metrics.map((m) => ({
          name: m.Name,
          policy: String(emf[METRICS.policyDimension]),
          value: Number(emf[m.Name]),
        })),
      );
    });
}

afterEach(() => {
  delete process.env.POWERTOOLS_METRICS_DISABLED;
});

describe("the Audit function", () => {
  it("publishes each policy's estimate and bound, and only a label count where nothing is labelled", async () => {
    const policies = new PolicyRegistry([
      parsePolicy({ ...TEAMS_POLICY, auditSampleRate: 0.1, maxAutoError: 0.05 }),
      parsePolicy({ ...TEAMS_POLICY, id: "quiet", auditSampleRate: 0.1 }),
    ]);
    const store = new InMemoryDecisionStore();
    // 20 labelled audit samples of tickets in the window, 2 wrong; one older one (wrong) outside it.
    const sample = (i: number, createdAt: string, label: string) =>
      store.create({
        itemId: `A-${i}`,
        policyId: "tickets",
        policyVersion: 1,
        status: "reviewed",
        route: "human",
        reason: "audit_sample",
        chosen: "billing",
        label,
        auditBand: "all",
        auditInclusionProbability: 0.1,
        createdAt,
        updatedAt: createdAt,
        eventPublished: true,
      });
    for (let i = 0; i < 20; i++) await sample(i, "2026-11-29T10:00:00.000Z", i < 2 ? "technical" : "billing");
    await sample(99, "2026-09-01T10:00:00.000Z", "technical");
    let result: unknown;
    const metrics = await emitted(async () => {
      result = await createAuditHandler(async () => ({ policies, store }))(
        scheduled as never,
        { functionName: "audit" } as never,
      );
    });
    const of = (policy: string) =>
      metrics
        .filter((m) => m.policy === policy)
        .map((m) => m.name)
        .sort();
    expect(of("tickets")).toEqual(
      [
        METRICS.auditCoverage,
        METRICS.auditInconclusive,
        METRICS.auditLabels,
        METRICS.autoErrorLowerBound,
        METRICS.autoErrorRate,
        METRICS.autoErrorUpperBound,
      ].sort(),
    );
    expect(of("quiet")).toEqual([METRICS.auditLabels]);
    const value = (name: string) => metrics.find((m) => m.policy === "tickets" && m.name === name)!.value;
    expect(value(METRICS.auditLabels)).toBe(20);
    expect(value(METRICS.autoErrorRate)).toBeCloseTo(0.1, 10);
    // 2 wrong of 20: the exact 95% interval runs from 1.2% to 31.7%, across the 5% budget.
    expect(value(METRICS.autoErrorUpperBound)).toBeCloseTo(0.317, 3);
    expect(value(METRICS.autoErrorLowerBound)).toBeCloseTo(0.0123, 3);
    // Neither end settles it: too few labels, the inconclusive alarm's case.
    expect(value(METRICS.auditInconclusive)).toBe(1);
    expect(value(METRICS.auditCoverage)).toBe(1);
    const { results } = result as {
      results: { policyId: string; labelled: number; target?: number; verdict?: string }[];
    };
    const byPolicy = results.map((r) => [r.policyId, r.labelled, r.target, r.verdict]).sort();
    expect(byPolicy).toEqual([
      ["quiet", 0, undefined, undefined],
      ["tickets", 20, 0.05, "not_enough_labels"],
    ]);
  });
});
