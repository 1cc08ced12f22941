/**
 * Probe of the certificate gate (issue 40): does `decide status` say of a cascade's certificate
 * what the decide path does? Status checks the certificate against the model that decided the
 * policy's latest item, taken from that record's `modelSha256`, always as the first tier's
 * (`cli/status.ts`, certificatesOf). The record's `modelSha256` is the acting tier's, so after an
 * item the second model acted on, status reads a certificate that covers it as stale. The status
 * command needs the decisions table (DynamoDB), so this test applies its rule, copied, to a record
 * the decide path wrote.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { certificateProblem, scoredByOf } from "../../shared/domain/calibration/provenance.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { cascadeCertified } from "../helpers/cascade-certificate.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const SMALL = "5".repeat(64);
const LARGE = "1".repeat(64);
const LAYOUT = "test@1";
const CASCADE = cascadeTicketsPolicy({
  autoThreshold: 0.8,
  cascade: [{ model: "large", autoThreshold: 0.7, temperature: 2 }],
});

/** The cascade with a certificate (learn-then-test, not required) naming both tiers as they run. */
const certified = (policy: Policy) =>
  cascadeCertified(policy, { first: SMALL, later: LARGE, layout: LAYOUT, automated: 300, labels: 400 });

/** The first model unsure, the second sure, each answering with its own file. */
const endpoint: DecidesItems = {
  async decide(item, policy) {
    const { model } = systemOneRequest(item, policy);
    return {
      logits: model === "large" ? [6, 0, 0, 0] : [1, 0.5, 0, 0],
      allowedTokenMass: 0.9,
      modelSha256: model === "large" ? LARGE : SMALL,
      promptSha256: "p".repeat(64),
      promptVersion: LAYOUT,
      latencyMs: 1,
    };
  },
};

/** What `decide status` checks a certificate against: what scored the latest record (cli/status.ts). */
const statusProblem = (policy: Policy, latest: DecisionRecord) =>
  certificateProblem(policy, scoredByOf(latest));

describe("probe: decide status and the decide path on a cascade's certificate", () => {
  // HOLE 5 (low, misleading status): status says "certificate stale: model changed" (and, for a
  // policy that requires a certificate, "automation off") while the decide path finds the
  // certificate holding and acts on the second model's answers.
  it("HOLE 5 (fixed): status does not call a certificate stale that the decide path acts under", async () => {
    const policy = certified(CASCADE);
    const store = new InMemoryDecisionStore();
    await decideMessage(JSON.stringify({ id: "T-1", policy: "tickets", state: "charged twice" }), {
      policies: new PolicyRegistry([policy]),
      store,
      endpoint,
      publisher: { publish: async () => undefined },
      publishLeaseMs: 1_000,
      now: () => new Date(Date.UTC(2026, 11, 2)),
    });
    const record = (await store.latest("T-1", "tickets"))!;
    // The decide path: the second model acted, under a certificate that holds for it.
    expect(record).toMatchObject({ route: "auto", reason: "confident", modelSha256: LARGE });
    expect(record.certificateProblem).toBeUndefined();
    // Status finds no problem either (it said "certificate stale: model changed" before).
    expect(statusProblem(policy, record)).toBeUndefined();
  });
});
