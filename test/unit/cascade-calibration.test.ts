/**
 * `decide calibrate --max-auto-error` on a two-model cascade: the second model's map is fitted on
 * the items the first passed on, both thresholds come from the cascade's certificate and land in
 * the proposed version with a certificate naming both models, which the decide path accepts for
 * the second model's answers and which recomputes on its labels (and not on changed ones); the
 * report shows the pair and the front; labels no one could have given for the decisions a pair
 * automates (the floor) certify nothing. Rows are generated logits of two calibrated models
 * (`test/helpers/cascade-rows.ts`), labelled uniformly.
 */
import { describe, expect, it } from "vitest";
import { calibratePolicy } from "../../shared/domain/calibration/calibrate.ts";
import { certificateOnLabelsProblem } from "../../shared/domain/calibration/certificate/certificate-recompute.ts";
import type { CascadeRow } from "../../shared/domain/calibration/certificate/certified-items.ts";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
import { certificateProblem } from "../../shared/domain/calibration/provenance.ts";
import { tierPolicy } from "../../shared/domain/cascade.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { renderReport } from "../../shared/reports/calibration-report.ts";
import { cascadeDecisions, LARGE_SHA, SMALL_SHA } from "../helpers/cascade-rows.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const [SMALL, LARGE] = [SMALL_SHA, LARGE_SHA];

const POLICY = cascadeTicketsPolicy({
  autoThreshold: 0.99,
  requireCertificate: true,
  cascade: [{ model: "large", autoThreshold: 0.9, temperature: 1 }],
});

/** `n` labelled decisions, labelled uniformly (a certification sample of every decision). */
function rows(n: number, seed: number): CascadeRow[] {
  return cascadeDecisions(n, seed).map((d) => ({
    logits: d.firstLogits,
    label: d.label,
    key: `item-${d.index}`,
    kind: "certification" as const,
    modelSha256: SMALL,
    promptVersion: "v1",
    ...(d.secondLogits
      ? { secondLogits: d.secondLogits, secondModelSha256: LARGE, secondPromptVersion: "v1" }
      : {}),
  }));
}

const labelled = rows(1500, 7);
const goal = { kind: "max-auto-error" as const, maxError: 0.05, confidence: 0.95 };
const summary = calibratePolicy(POLICY, labelled, { goal, now: new Date("2026-12-02T00:00:00Z") });
const proposed = summary.proposedPolicy;

describe("calibrating a two-model cascade", () => {
  it("writes both certified thresholds, the second model's fitted map, and a certificate naming both", () => {
    const c = summary.cascade!;
    expect(c.result.thresholds).not.toBeNull();
    const [t1, t2] = c.result.thresholds!;
    expect(proposed.autoThreshold).toBe(t1);
    expect(proposed.cascade![0]).toMatchObject({ model: "large", autoThreshold: t2 });
    // Its answers were made at twice their scale: the fit finds it.
    expect(proposed.cascade![0]!.temperature).toBeGreaterThan(1.5);
    expect(proposed.cascade![0]!.temperature).toBeLessThan(2.6);
    expect(c.secondLabels).toBe(labelled.filter((r) => r.secondLogits).length);
    const certificate = proposed.certificate!;
    expect(certificate.tiers).toMatchObject([
      { model: "small", modelSha256: SMALL, threshold: t1 },
      { model: "large", modelSha256: LARGE, threshold: t2 },
    ]);
    expect(certificate.bound!).toBeLessThanOrEqual(0.05);
    expect(summary.threshold.threshold).toBe(t1);
    expect(summary.threshold.notes.some((n) => n.startsWith("cascade: the first model acts at"))).toBe(true);
  });

  it("sends fewer items to people than the first model alone, at the target and along the front", () => {
    const c = summary.cascade!;
    expect(c.peoplePer1000.cascade!).toBeLessThan(c.peoplePer1000.firstAlone ?? 1000);
    expect(c.front.map((p) => p.maxError)).toEqual([0.01, 0.02, 0.05, 0.1]);
    for (const p of c.front)
      if (p.cascade !== null) expect(p.cascade).toBeLessThanOrEqual(p.firstAlone ?? 1000);
  });

  it("lets the second model act under requireCertificate only with the cascade's certificate", () => {
    const view = tierPolicy(proposed, 1);
    const sure = [0.999, 0.0005, 0.0003, 0.0002];
    const scoredBy = { modelSha256: LARGE, promptVersion: "v1", tier: 1 };
    const routed = routeDecision({ ...view, auditSampleRate: 0 }, sure, "x", null, scoredBy, undefined, {
      ...proposed,
      auditSampleRate: 0,
    });
    expect(routed).toMatchObject({ route: "auto", reason: "confident" });
    expect(routed.certificateProblem).toBeUndefined();
    // A certificate of the first model alone does not cover the second.
    const single = { ...proposed.certificate!, tiers: undefined };
    const alone = routeDecision(view, sure, "x", null, scoredBy, undefined, {
      ...proposed,
      certificate: single,
    });
    expect(alone).toMatchObject({ route: "human", reason: "uncertified" });
    expect(certificateProblem(proposed, { ...scoredBy, modelSha256: SMALL })).toMatch(
      /model of tier 2 changed/,
    );
  });

  it("recomputes on its labels, and not on labels whose second answers changed", () => {
    expect(certificateOnLabelsProblem(proposed, labelled, "here")).toBeUndefined();
    const changed = labelled.map((r, i) =>
      i === labelled.findIndex((x) => x.secondLogits)
        ? { ...r, secondLogits: r.secondLogits!.map((v) => -v) }
        : r,
    );
    expect(certificateOnLabelsProblem(proposed, changed, "here")).toMatch(/label set is not/);
  });

  it("shows the pair, the second model's fit and the front in the report", () => {
    const html = renderReport(POLICY, summary);
    expect(html).toContain('id="cascade"');
    expect(html).toContain('id="front"');
    expect(html).toContain("The first model alone");
    expect(html).toContain(`large answered ${summary.cascade!.secondLabels} labelled items`);
  });

  it("passes apply's check, which refuses a proposal that changes a later tier's model", () => {
    expect(checkProposal(POLICY, proposed).refusals).toEqual([]);
    expect(checkProposal(POLICY, proposed).changes.map((c) => c.field)).toContain("cascade");
    const swapped = { ...proposed, cascade: [{ ...proposed.cascade![0]!, model: "other" }] };
    expect(checkProposal(POLICY, swapped).refusals[0]).toMatch(
      /^cascade: a calibration proposal may not change its models or their order \(large -> other\)/,
    );
    const audited = { ...proposed, cascade: [{ ...proposed.cascade![0]!, temperature: 500 }] };
    expect(checkProposal(POLICY, audited).refusals.join("\n")).toMatch(
      /cascade\.0\.temperature: 500 is outside/,
    );
  });

  it("certifies no pair below the floor the labels may speak for", () => {
    const none = calibratePolicy(POLICY, labelled, { goal, now: new Date(), thresholdFloor: Infinity });
    expect(none.cascade!.result.thresholds).toBeNull();
    expect(none.proposedPolicy.certificate!.threshold).toBeNull();
    const high = calibratePolicy(POLICY, labelled, { goal, now: new Date(), thresholdFloor: 0.95 });
    for (const t of high.cascade!.result.thresholds ?? []) expect(t).toBeGreaterThanOrEqual(0.95);
  });

  it("keeps the first model's own certificate when the labels carry no second answer (a labelled file)", () => {
    const firstOnly = labelled.map(({ secondLogits: _s, ...r }) => r);
    const s = calibratePolicy(POLICY, firstOnly, { goal, now: new Date() });
    expect(s.cascade).toBeUndefined();
    expect(s.proposedPolicy.certificate!.tiers).toBeUndefined();
    expect(s.proposedPolicy.certificate!.threshold).not.toBeNull();
    expect(s.threshold.notes.join("\n")).toMatch(/no labelled item carries the answer of large/);
  });

  it("refuses a cascade of three models with a clear message", () => {
    const three = parsePolicy({
      ...POLICY,
      cascade: [...POLICY.cascade!, { model: "huge", autoThreshold: 0.9 }],
    });
    const s = calibratePolicy(three, labelled, { goal, now: new Date() });
    expect(s.cascade).toBeUndefined();
    expect(s.proposedPolicy.certificate?.tiers).toBeUndefined();
    expect(s.threshold.notes).toContain(
      "tickets asks 3 models: a cascade's certificate covers two, so this one speaks for the first model alone and the later models automate nothing under requireCertificate",
    );
  });
});
