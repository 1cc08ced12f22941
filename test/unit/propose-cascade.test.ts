/**
 * Recalibration of a two-model cascade from the decisions table: reviewed records that keep both
 * models' answers under `tiers` (escalations all labelled, automatic decisions labelled where
 * drawn for audit, each with its chance) become a proposal whose thresholds were certified
 * together, whose report shows the front, and whose certificate the decide path's check
 * recomputes on the same table and verifies; a label added after it leaves it unverified.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibratedProbabilities } from "../../shared/domain/calibration/map.ts";
import { type TierAnswer, tierPolicy } from "../../shared/domain/cascade.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { verifyCertificate } from "../../shared/use-cases/calibration/certificate-labels.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { type CascadeDecision, cascadeDecisions, LARGE_SHA, SMALL_SHA } from "../helpers/cascade-rows.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const AUDIT_RATE = 0.3;
const POLICY = cascadeTicketsPolicy({
  autoThreshold: 0.99,
  auditSampleRate: AUDIT_RATE,
  cascade: [{ model: "large", autoThreshold: 0.9, temperature: 2 }],
});
const AT = "2026-12-01T10:00:00.000Z";

/** A tier's answer as the decide path keeps it, routed under that tier's view (audits off: drawn below). */
function answer(policy: Policy, index: number, logits: number[], model: string, sha: string): TierAnswer {
  const view = { ...tierPolicy(policy, index), auditSampleRate: 0 };
  const p = calibratedProbabilities(logits, view);
  const routing = routeDecision(view, p, "x");
  return {
    model,
    modelSha256: sha,
    promptSha256: sha,
    promptVersion: "v1",
    distribution: Object.fromEntries(policy.options.map((o, k) => [o.id, p[k]!])),
    rawLogits: logits,
    chosen: routing.chosen,
    topProbability: routing.topProbability,
    reason: routing.reason,
    temperature: view.temperature,
    latencyMs: 10,
  };
}

/** The reviewed record of a decision, or none when it was automated and not drawn for audit. */
function reviewed(d: CascadeDecision, random: SeededRandom, key: string): DecisionRecord | undefined {
  const tiers = [answer(POLICY, 0, d.firstLogits, "small", SMALL_SHA)];
  if (d.secondLogits) tiers.push(answer(POLICY, 1, d.secondLogits, "large", LARGE_SHA));
  const acting = tiers.at(-1)!;
  const automated = acting.reason === "confident";
  if (automated && random.nextFloat() >= AUDIT_RATE) return undefined;
  return {
    itemId: key,
    policyId: POLICY.id,
    policyVersion: POLICY.version,
    status: "reviewed",
    route: "human",
    reason: automated ? "audit_sample" : acting.reason,
    ...(automated ? { auditInclusionProbability: AUDIT_RATE } : {}),
    chosen: acting.chosen,
    topProbability: acting.topProbability,
    rawLogits: acting.rawLogits,
    modelSha256: acting.modelSha256,
    promptVersion: "v1",
    tiers,
    label: POLICY.options[d.label]!.id,
    reviewedAt: AT,
    createdAt: AT,
    updatedAt: AT,
    eventPublished: true,
  };
}

async function table(n: number, seed: number): Promise<InMemoryDecisionStore> {
  const store = new InMemoryDecisionStore();
  const random = new SeededRandom(seed + 1);
  for (const d of cascadeDecisions(n, seed)) {
    const record = reviewed(d, random, `T-${d.index}`);
    if (record) await store.create(record);
  }
  return store;
}

describe("proposing a cascade's next version from the decisions table", () => {
  it("certifies both thresholds together, and its certificate verifies on the table until a label is added", async () => {
    const store = await table(3000, 5);
    const folder = await mkdtemp(join(tmpdir(), "cascade-proposal-"));
    const objects = new FsObjectStore(folder);
    const policies = new PolicyRegistry([POLICY]);
    const now = () => new Date("2026-12-02T06:00:00.000Z");
    const [outcome] = await proposeCalibrations(
      { policies, store, objects, now },
      { goal: { kind: "max-auto-error", maxError: 0.05, confidence: 0.95 } },
    );
    expect(outcome, JSON.stringify(outcome).slice(0, 600)).toMatchObject({ status: "proposed" });
    if (outcome?.status !== "proposed") return;
    const proposed = parsePolicy(
      JSON.parse(await readFile(join(folder, outcome.keys.policy), "utf8")),
      "proposal",
    );
    const certificate = proposed.certificate!;
    expect(certificate.threshold).not.toBeNull();
    expect(certificate.tiers!.map((t) => [t.model, t.modelSha256, t.threshold])).toEqual([
      ["small", SMALL_SHA, proposed.autoThreshold],
      ["large", LARGE_SHA, proposed.cascade![0]!.autoThreshold],
    ]);
    // Audit samples stand for the automatic decisions not drawn: the bound is weighted.
    expect(certificate.evidence?.method).toBe("fay-feuer");
    expect(certificate.kinds!.audit).toBeGreaterThan(0);
    const report = await readFile(
      join((objects as unknown as { root: string }).root, outcome.keys.report),
      "utf8",
    );
    expect(report).toContain('id="front"');

    const registry = new PolicyRegistry([POLICY, proposed]);
    expect(await verifyCertificate({ store, policies: registry }, proposed)).toMatchObject({
      verified: true,
    });
    const extra = reviewed(cascadeDecisions(1, 99)[0]!, new SeededRandom(1), "LATE")!;
    await store.create({ ...extra, reviewedAt: "2026-12-02T05:00:00.000Z" });
    const verdict = await verifyCertificate({ store, policies: registry }, proposed);
    expect(verdict).toMatchObject({ verified: false, reason: expect.stringMatching(/label set is not/) });
  });
});
