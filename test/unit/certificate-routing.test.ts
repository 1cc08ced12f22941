/**
 * The decide path checks a policy's certificate against what scored each item: a decision by
 * another model file or prompt layout than the certified ones is flagged on its record
 * ("certificate stale: model changed"); a policy that requires a valid certificate then sends it
 * to people (reason `uncertified`) instead of automating it; one whose certificate qualified no
 * threshold automates nothing; a certificate that holds changes nothing.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import {
  calibrationSha256,
  certificateProblem,
  policyTextSha256,
} from "../../shared/domain/calibration/provenance.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import type { PipelineEvent } from "../../shared/domain/events.ts";
import { CERTIFICATE_METHOD } from "../../shared/domain/policy/certificate-schema.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { reasonText } from "../../shared/pages/review-views.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const MODEL = "a".repeat(64);
const LAYOUT = "choice-v1@policy-first";

/** `policy` with a certificate made on MODEL and LAYOUT at its own threshold (or none qualified). */
function certified(policy: Policy, threshold: number | null = policy.autoThreshold): Policy {
  const version = threshold === null ? { ...policy, autoThreshold: 1 } : policy;
  return parsePolicy({
    ...version,
    certificate: {
      maxError: 0.02,
      confidence: 0.95,
      method: CERTIFICATE_METHOD,
      threshold,
      bound: threshold === null ? null : 0.0199,
      // A certificate that qualified no threshold automates nothing (as calibration writes it).
      automated: threshold === null ? 0 : 149,
      errors: 0,
      labels: 300,
      coverage: threshold === null ? 0 : 0.4967,
      modelSha256: MODEL,
      promptVersion: LAYOUT,
      policySha256: policyTextSha256(version),
      calibrationSha256: calibrationSha256(version),
      labelsSha256: "c".repeat(64),
      certifiedAt: "2026-12-01T00:00:00.000Z",
    },
  });
}

/** Answers confidently for the first option, as `model` under `layout`. */
function endpoint(model: string, layout: string, logits = [6, 0]): DecidesItems {
  return {
    async decide(): Promise<EndpointDecision> {
      return {
        logits,
        allowedTokenMass: 0.9,
        modelSha256: model,
        promptSha256: "b".repeat(64),
        promptVersion: layout,
        latencyMs: 1,
      };
    },
  };
}

let store: InMemoryDecisionStore;
const publisher = { publish: async (_: readonly PipelineEvent[]) => {} };

async function decide(policy: Policy, scorer: DecidesItems, id = "T-1") {
  const deps = {
    policies: new PolicyRegistry([policy]),
    store,
    endpoint: scorer,
    publisher,
    publishLeaseMs: 1000,
    now: () => new Date(0),
  };
  await decideMessage(JSON.stringify({ id, policy: policy.id, state: "my invoice" }), deps);
  return (await store.latest(id, policy.id))!;
}

beforeEach(() => {
  store = new InMemoryDecisionStore();
});

describe("certificates on the decide path", () => {
  it("changes nothing while the certificate holds", async () => {
    const record = await decide(certified(TEAMS_POLICY), endpoint(MODEL, LAYOUT));
    expect(record).toMatchObject({ route: "auto", reason: "confident" });
    expect(record.certificateProblem).toBeUndefined();
  });

  it("flags a decision by another model or prompt layout, and still automates when not required", async () => {
    const policy = certified(TEAMS_POLICY);
    const other = await decide(policy, endpoint("f".repeat(64), LAYOUT));
    expect(other).toMatchObject({ route: "auto", certificateProblem: "certificate stale: model changed" });
    const layout = await decide(policy, endpoint(MODEL, "choice-v2@policy-first"), "T-2");
    expect(layout.certificateProblem).toBe("certificate stale: prompt layout changed");
  });

  it("sends items to people when the policy requires a certificate that does not hold", async () => {
    const policy = { ...certified(TEAMS_POLICY), requireCertificate: true };
    const record = await decide(policy, endpoint("f".repeat(64), LAYOUT));
    expect(record).toMatchObject({
      route: "human",
      reason: "uncertified",
      certificateProblem: "certificate stale: model changed",
    });
    // The review page says why it came to people.
    expect(reasonText(record, policy)).toMatch(
      /^Not certified \(certificate stale: model changed\): 100% for <em>Billing<\/em> would have been automated$/,
    );
    const none = await decide({ ...TEAMS_POLICY, requireCertificate: true }, endpoint(MODEL, LAYOUT), "T-3");
    expect(none).toMatchObject({
      route: "human",
      reason: "uncertified",
      certificateProblem: "no certificate",
    });
    // Changing the temperature by hand leaves the certificate behind.
    const edited = { ...policy, temperature: 0.5 };
    expect(certificateProblem(edited)).toBe("certificate stale: calibration changed");
  });

  it("automates nothing under a certificate that qualified no threshold", async () => {
    // So sure that its probability rounds to 1, at or above any threshold the schema allows.
    const record = await decide(certified(TEAMS_POLICY, null), endpoint(MODEL, LAYOUT, [40, 0]));
    expect(record).toMatchObject({
      route: "human",
      reason: "uncertified",
      certificateProblem: "certificate: no threshold qualified",
    });
  });
});
