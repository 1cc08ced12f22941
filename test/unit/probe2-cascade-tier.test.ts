/**
 * A second attacker's probe of the certificate gate (issue 40), on a cascade: a registered
 * certificate certifies one threshold t and its proposal sets every tier's threshold to
 * max(t, its own). Does anything hold a later tier to what was certified once a person writes the
 * next version by hand? The flow: a two-model cascade decides items through the decide path (the
 * first model unsure, the second sure and right), a registered sample is drawn and labelled, and
 * `--propose` gives version 2.
 */

import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { calibrationSha256 } from "../../shared/domain/calibration/provenance.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  CertificateVerdicts,
  verifyCertificate,
} from "../../shared/use-cases/calibration/certificate-labels.ts";
import { proposeCalibrations } from "../../shared/use-cases/calibration/propose-calibration.ts";
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { labelItem } from "../../shared/use-cases/review/review-decision.ts";
import { reviewOf } from "../helpers/certification-store.ts";
import { PROBE_GOAL, PROBE_POLICY } from "../helpers/probe-flow.ts";

const SMALL = "5".repeat(64);
const LARGE = "1".repeat(64);
const CASCADE = parsePolicy({ ...PROBE_POLICY, cascade: [{ model: "large", autoThreshold: 0.85 }] });
/** 0.45 on "allow": the first model passes it on. */
const UNSURE = [1, 0.3, 0, 0];
/** 0.99 on "allow". */
const SURE = [6, 0, 0, 0];
/** 0.525 on "allow": below any threshold the flow certifies. */
const HALF = [1.2, 0, 0, 0];

/** The first model answers `first`, the second `second`, each as its own file. */
function endpoint(first: readonly number[], second: readonly number[]): DecidesItems {
  return {
    async decide(item, policy) {
      const large = systemOneRequest(item, policy).model === "large";
      return {
        logits: [...(large ? second : first)],
        allowedTokenMass: 0.95,
        modelSha256: large ? LARGE : SMALL,
        promptSha256: "p".repeat(64),
        promptVersion: "choice-v1@policy-first",
        latencyMs: 1,
      };
    },
  };
}

/** Distinct words (digits fold to one text group), so each item is its own unit. */
const words = (i: number) => `post ${i.toString(26).replace(/\d/g, (d) => "qrstuvwxyz"[Number(d)]!)}`;

/** Decides `id` under the current version of `policies` on `store`; its record. */
async function decide(store: InMemoryDecisionStore, policies: Policy[], answers: DecidesItems, id: string) {
  const registry = new PolicyRegistry(policies);
  await decideMessage(JSON.stringify({ id, policy: CASCADE.id, state: words(Number(id.slice(2)) || 0) }), {
    policies: registry,
    store,
    endpoint: answers,
    publisher: { publish: async () => undefined },
    publishLeaseMs: 1_000,
    now: () => new Date(Date.UTC(2026, 10, 20)),
    certificates: new CertificateVerdicts({ store, policies: registry }),
  });
  return (await store.latest(id, CASCADE.id))!;
}

/** Version 1's 400 decisions (the second model acts, right), 250 drawn and labelled; version 2 proposed. */
async function certifiedCascade() {
  const store = new InMemoryDecisionStore();
  for (let i = 0; i < 400; i++) {
    const r = await decide(store, [CASCADE], endpoint(UNSURE, SURE), `C-${i}`);
    if (r.status === "auto_approved") await store.transition(r, "auto_approved", "actioned", {});
  }
  const s = reviewOf(store, CASCADE);
  const requested = await requestCertification(
    { store, now: s.now },
    { policy: CASCADE, size: 250, minProbability: 0.85, order: "first", goal: PROBE_GOAL },
  );
  expect(requested.queued).toBe(250);
  const page = await store.pageReviewQueue({ policyIds: [CASCADE.id], limit: 10_000, countCap: 0 });
  for (const r of page.records.filter((x) => x.certification))
    await labelItem({ ...r, label: "allow" }, s.lead, s.review);
  const folder = await mkdtemp(join(tmpdir(), "probe2-cascade-"));
  const [outcome] = await proposeCalibrations(
    { policies: s.policies, store, objects: new FsObjectStore(folder), now: s.now },
    { minLabels: 10, goal: { kind: "max-auto-error", ...PROBE_GOAL } },
  );
  if (outcome?.status !== "proposed") throw new Error(`no proposal: ${JSON.stringify(outcome)}`);
  const proposed = parsePolicy(JSON.parse(await readFile(join(folder, outcome.keys.policy), "utf8")));
  const v2 = parsePolicy({ ...proposed, requireCertificate: true });
  return { store, v2 };
}

/** `v2` as version 3 written by hand: its second model at `threshold`, the certificate's tier entry and hash to match. */
function laterTierLowered(v2: Policy, threshold: number): Policy {
  const tier = { ...v2.cascade![0]!, autoThreshold: threshold };
  const tiers = v2.certificate!.tiers!;
  return parsePolicy({
    ...v2,
    version: 3,
    cascade: [tier],
    certificate: {
      ...v2.certificate!,
      tiers: [tiers[0]!, { ...tiers[1]!, threshold, calibrationSha256: calibrationSha256(tier) }],
    },
  });
}

describe("probe 2: a cascade's later tier under a registered certificate", () => {
  it("control: version 2 acts on the second model's sure answers and sends its unsure ones to people", async () => {
    const { store, v2 } = await certifiedCascade();
    expect(v2.certificate?.registered).toBeDefined();
    const t = v2.certificate!.threshold!;
    expect(t).toBeGreaterThanOrEqual(0.85);
    expect(v2.cascade?.[0]?.autoThreshold).toBe(t);
    const sure = await decide(store, [CASCADE, v2], endpoint(UNSURE, SURE), "C-9001");
    expect(sure).toMatchObject({ route: "auto", reason: "confident", modelSha256: LARGE });
    const half = await decide(store, [CASCADE, v2], endpoint(UNSURE, HALF), "C-9002");
    expect(half).toMatchObject({ route: "human", reason: "below_threshold" });
  }, 120_000);

  // HOLE D (high): certificateProblem (provenance.ts) holds the first model's autoThreshold to
  // the certified threshold (the fix of the first probe's HOLE 1a), but a later tier's only to the
  // certificate's own `tiers` entry (tiersProblem), which the same file carries; its
  // calibrationSha256 is a plain hash of the tier's fields. decidesOtherwise
  // (registered-certification.ts) compares each tier's map (mapOf: temperature, prior, offsets),
  // not its threshold, and registeredCertificateProblem compares only the first threshold with
  // the recomputed one. So version 3 written by hand with the second model at 0.5, the
  // certificate's tier entry and its hash to match (the first tier untouched), verifies, and
  // the second model acts alone at 0.525 under a certificate tested at 0.85 or above.
  it("HOLE D: a later tier's threshold lowered by hand below the certified one does not act alone", async () => {
    const { store, v2 } = await certifiedCascade();
    const v3 = laterTierLowered(v2, 0.5);
    const record = await decide(store, [CASCADE, v2, v3], endpoint(UNSURE, HALF), "C-9003");
    // Should be: people, as nothing below the certified threshold was ever drawn.
    expect(record.route).toBe("human");
  }, 120_000);

  it("HOLE D (verify): a certificate whose later tier is below its certified threshold does not verify", async () => {
    const { store, v2 } = await certifiedCascade();
    const v3 = laterTierLowered(v2, 0.5);
    const policies = new PolicyRegistry([CASCADE, v2, v3]);
    expect((await verifyCertificate({ store, policies }, v3)).verified).toBe(false);
  }, 120_000);
});
