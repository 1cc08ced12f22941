/**
 * What-if and shadow scoring route a candidate as the decide path would, certificate check
 * included (issue 36, item 7): a candidate that requires a certificate made on another model
 * file automates nothing on answers from the live model, so its what-if shows coverage falling to
 * zero and its shadow score says "uncertified" with the reason. Before, both skipped the model
 * and layout check: the what-if showed no coverage change and the shadow said "auto".
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibrationSha256, policyTextSha256 } from "../../shared/domain/calibration/provenance.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { CERTIFICATE_METHOD } from "../../shared/domain/policy/certificate-schema.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { whatIf } from "../../shared/use-cases/what-if/what-if.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const LIVE_MODEL = "a".repeat(64);
const OTHER_MODEL = "f".repeat(64);
const LAYOUT = "choice-v1@policy-first";

/** Version 2 requiring a certificate made on OTHER_MODEL (counts and hashes that hold). */
function candidate(extra: Partial<Policy> = {}): Policy {
  const next = { ...TEAMS_POLICY, version: 2, requireCertificate: true, ...extra };
  return parsePolicy({
    ...next,
    certificate: {
      maxError: 0.02,
      confidence: 0.95,
      method: CERTIFICATE_METHOD,
      threshold: next.autoThreshold,
      bound: 0.0199,
      automated: 149,
      errors: 0,
      labels: 300,
      coverage: 0.4967,
      modelSha256: OTHER_MODEL,
      promptVersion: LAYOUT,
      policySha256: policyTextSha256(next),
      calibrationSha256: calibrationSha256(next),
      labelsSha256: "c".repeat(64),
      certifiedAt: "2026-12-01T00:00:00.000Z",
    },
  });
}

/** Confident answers from the live model. */
const endpoint: DecidesItems = {
  async decide(): Promise<EndpointDecision> {
    return {
      logits: [6, 0],
      allowedTokenMass: 0.9,
      modelSha256: LIVE_MODEL,
      promptSha256: "b".repeat(64),
      promptVersion: LAYOUT,
      latencyMs: 1,
    };
  },
};

async function decideAll(policies: Policy[], count: number) {
  const store = new InMemoryDecisionStore();
  const deps = {
    policies: new PolicyRegistry(policies),
    store,
    endpoint,
    publisher: { publish: async (_: readonly PipelineEvent[]) => {} },
    publishLeaseMs: 1000,
    now: () => new Date(),
  };
  for (let i = 0; i < count; i++)
    await decideMessage(JSON.stringify({ id: `T-${i}`, policy: "tickets", state: "charged twice" }), deps);
  return { store, registry: deps.policies };
}

describe("the certificate check off the decide path", () => {
  it("what-if: a candidate certified on another model automates nothing on the live model's answers", async () => {
    const { store, registry } = await decideAll([TEAMS_POLICY], 30);
    const result = await whatIf(
      { store, policies: registry },
      {
        candidate: candidate(),
        source: { kind: "stored-logits" },
        since: new Date(Date.now() - 3_600_000).toISOString(),
        sample: 100,
      },
    );
    expect(result.summary.coverage.live).toBe(1);
    expect(result.summary.coverage.candidate).toBe(0);
    expect(result.summary.toHuman.items).toBe(30);
    expect(result.rows[0]!.candidate).toMatchObject({ route: "human", reason: "uncertified" });
  });

  it("shadow: the candidate's would-be route says uncertified, with the reason", async () => {
    const live = parsePolicy({ ...TEAMS_POLICY, shadow: { version: 2, share: 1 } });
    const { store } = await decideAll([live, candidate({ candidate: true })], 5);
    const record = (await store.latest("T-0", "tickets"))!;
    expect(record).toMatchObject({ route: "auto", reason: "confident" });
    expect(record.shadow).toMatchObject({
      route: "human",
      reason: "uncertified",
      certificateProblem: "certificate stale: model changed",
      modelSha256: LIVE_MODEL,
      promptVersion: LAYOUT,
    });
  });
});
