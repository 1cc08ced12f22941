/**
 * The pure parts of `decide what-if`: the stratified sample (proportional, every group present,
 * weights that add up to the decisions, the same sample every time), the comparison (flips by
 * option pair, route changes that ignore which items the audit happened to draw, the exact bound
 * on the labelled part), and which policy fields make the prompt.
 */
import { describe, expect, it } from "vitest";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { binomialUpperBound } from "../../shared/domain/statistics/beta.ts";
import {
  compareDecisions,
  type WhatIfDecision,
  type WhatIfRow,
} from "../../shared/domain/what-if/compare.ts";
import { changedPromptField } from "../../shared/domain/what-if/prompt-fields.ts";
import { StratifiedSampler, stratifiedSample } from "../../shared/domain/what-if/sample.ts";
import { renderWhatIf } from "../../shared/reports/what-if-report.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const decisions = [
  ...Array.from({ length: 900 }, (_, i) => ({ itemId: `A-${i}`, route: "auto", chosen: "billing" })),
  ...Array.from({ length: 95 }, (_, i) => ({ itemId: `H-${i}`, route: "human", chosen: "technical" })),
  ...Array.from({ length: 5 }, (_, i) => ({ itemId: `R-${i}`, route: "human", chosen: "account" })),
];

describe("stratifiedSample", () => {
  it("samples each route and option in proportion, keeps rare groups, and weights to the total", () => {
    const sample = stratifiedSample(decisions, 100);
    expect(sample).toHaveLength(100);
    const count = (chosen: string) => sample.filter((s) => s.record.chosen === chosen).length;
    expect(count("billing")).toBe(90);
    expect(count("technical")).toBe(9);
    expect(count("account")).toBe(1);
    expect(sample.reduce((sum, s) => sum + s.weight, 0)).toBeCloseTo(1000, 9);
    expect(sample.find((s) => s.record.chosen === "account")!.weight).toBe(5);
    // The same table gives the same sample.
    expect(
      stratifiedSample([...decisions].reverse(), 100)
        .map((s) => s.record.itemId)
        .sort(),
    ).toEqual(sample.map((s) => s.record.itemId).sort());
  });

  it("takes everything, unweighted, when there are no more records than the sample size", () => {
    expect(stratifiedSample(decisions.slice(0, 10), 500).map((s) => s.weight)).toEqual(new Array(10).fill(1));
  });
  it("draws from a stream holding the sample, not the window: 100,000 decisions, 3 strata, 300 held at most", () => {
    const sampler = new StratifiedSampler<{ itemId: string; route: string; chosen: string }>(100);
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      const chosen = i % 100 === 0 ? "account" : i % 10 === 0 ? "technical" : "billing";
      sampler.add({ itemId: `S-${i}`, route: chosen === "billing" ? "auto" : "human", chosen });
      most = Math.max(most, sampler.retained);
    }
    expect(most).toBeLessThanOrEqual(300);
    const sample = sampler.sample();
    expect(sample).toHaveLength(100);
    expect(sample.reduce((sum, s) => sum + s.weight, 0)).toBeCloseTo(100_000, 6);
    // Before, the whole window was held in memory and its times spread into Math.max, which
    // overflows the stack on Node 20 at 200,000 decisions.
  });
});

const d = (chosen: string, route: "auto" | "human", reason: WhatIfDecision["reason"]): WhatIfDecision => ({
  chosen,
  route,
  reason,
  topProbability: 0.9,
});
let rowCount = 0;
const row = (live: WhatIfDecision, candidate: WhatIfDecision, label?: string, weight = 10): WhatIfRow => ({
  itemId: `I-${++rowCount}`,
  weight,
  live,
  candidate,
  ...(label ? { label } : {}),
});

describe("compareDecisions", () => {
  it("counts flips by option pair, route changes and coverage, treating audit draws as automatic", () => {
    const rows = [
      row(d("billing", "auto", "confident"), d("technical", "auto", "confident")),
      row(d("billing", "auto", "confident"), d("technical", "human", "below_threshold")),
      // Drawn for audit by one version and not the other: no route change.
      row(d("billing", "human", "audit_sample"), d("billing", "auto", "confident")),
      row(d("account", "human", "below_threshold"), d("account", "auto", "confident"), "account"),
      row(d("account", "human", "below_threshold"), d("billing", "auto", "confident"), "account"),
    ];
    const s = compareDecisions(rows, 2);
    expect(s.decisions).toBe(50);
    expect(s.flipped).toEqual({ items: 3, estimated: 30 });
    expect(s.flips).toEqual([
      { from: "billing", to: "technical", items: 2, estimated: 20 },
      { from: "account", to: "billing", items: 1, estimated: 10 },
    ]);
    expect(s.toHuman.items).toBe(1);
    expect(s.toAuto.items).toBe(2);
    expect(s.coverage).toEqual({ live: 0.6, candidate: 0.8 });
    expect(s.auditSamples).toEqual({ live: 0.2, candidate: 0 });
    // People's workload counts every item they get, audit samples included.
    expect(s.escalationsPerDay).toEqual({ live: 15, candidate: 5 });
    expect(s.labelled).toMatchObject({ items: 2, automated: 2, wrong: 1 });
    expect(s.labelled.upperBound).toBeCloseTo(binomialUpperBound(1, 2, 0.95), 12);
  });
});

describe("the what-if report", () => {
  it("lists the route changes the summary counts: an audit draw by one version only is none", () => {
    const rows = [
      // Automated live, drawn for audit by the candidate (observation 4: listed, not counted).
      ...Array.from({ length: 15 }, () =>
        row(d("allow", "auto", "confident"), d("allow", "human", "audit_sample")),
      ),
      row(d("allow", "auto", "confident"), d("allow", "human", "below_threshold")),
      row(d("allow", "human", "below_threshold"), d("allow", "human", "audit_sample")),
    ];
    const summary = compareDecisions(rows, 1);
    const page = renderWhatIf({
      policyId: "p",
      liveVersion: 1,
      candidateVersion: 2,
      since: "2026-11-01T00:00:00.000Z",
      source: "stored logits",
      summary,
      rows,
      cost: [],
    });
    const listed = page.match(/<table id="changed">.*?<\/table>/s)?.[0] ?? "";
    const listedRows = listed.match(/<th scope="row">/g) ?? [];
    expect(summary.toHuman.items).toBe(1);
    expect(summary.toAuto.items).toBe(1);
    expect(listedRows).toHaveLength(summary.toHuman.items + summary.toAuto.items);
    expect(listed).toContain("allow (90.0%), auto (audit sample)");
    expect(page).toContain("of them audit samples (people label them first)");
  });
});

describe("changedPromptField", () => {
  it("names the first field that changes what the model is asked, and none for calibration changes", () => {
    const live = TEAMS_POLICY;
    const calibrated: Policy = {
      ...live,
      version: 2,
      temperature: 1.7,
      autoThreshold: 0.9,
      optionBias: [0.5, -0.5],
    };
    expect(changedPromptField(live, calibrated)).toBeUndefined();
    expect(changedPromptField(live, { ...calibrated, question: "Which one?" })).toBe("question");
    expect(changedPromptField(live, { ...calibrated, options: [...live.options].reverse() })).toBe("options");
    expect(changedPromptField(live, { ...calibrated, layout: "state-first" })).toBe("layout");
    expect(changedPromptField(undefined, calibrated)).toBe("version");
  });
});
