/**
 * A second attacker's probe of the certificate gate (issue 40): ways a lead who writes policy
 * files (or edits an `--apply-proposal` file) gets a policy that requires a certificate to act
 * alone where its pre-registered certificate was not earned. Each "HOLE" is a hole found on
 * 2026-12-06, a test that failed before its fix the same day: it asserts what should happen, and
 * its comment names the hole and where it was.
 */
import { describe, expect, it } from "vitest";
import {
  calibrationSha256,
  certificateProblem,
  policyTextSha256,
} from "../../shared/domain/calibration/provenance.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  CertificateVerdicts,
  verifyCertificate,
} from "../../shared/use-cases/calibration/certificate-labels.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { FLOW_MODEL } from "../helpers/certification-store.ts";
import {
  decidedProbe,
  drawAndLabel,
  GOOD_MODEL,
  nextVersionPlan,
  PROBE_POLICY,
  type ProbeSetting,
  proposeProbe,
} from "../helpers/probe-flow.ts";

const LAYOUT = "choice-v1@policy-first";
/** A model file no certificate was made on. */
const OTHER_MODEL = "d".repeat(64);
/** 0.99 on "allow", an automatable option. */
const SURE = [6, 0, 0, 0];

/** An endpoint answering `logits` as `model`, with `mass` of the probability on the option letters. */
function answering(logits: readonly number[], model = FLOW_MODEL, mass = 0.95): DecidesItems {
  return {
    async decide() {
      return {
        logits: [...logits],
        allowedTokenMass: mass,
        modelSha256: model,
        promptSha256: "b".repeat(64),
        promptVersion: LAYOUT,
        latencyMs: 1,
      };
    },
  };
}

/** Decides one new item under the latest of `policies`, answered by `endpoint`; its record. */
async function decideOne(s: ProbeSetting, policies: Policy[], endpoint: DecidesItems, id: string) {
  const registry = new PolicyRegistry(policies);
  await decideMessage(JSON.stringify({ id, policy: PROBE_POLICY.id, state: "a post" }), {
    policies: registry,
    store: s.store,
    endpoint,
    publisher: { publish: async () => undefined },
    publishLeaseMs: 1_000,
    now: () => new Date(Date.UTC(2026, 11, 20)),
    certificates: new CertificateVerdicts({ store: s.store, policies: registry }),
  });
  return (await s.store.latest(id, PROBE_POLICY.id))!;
}

/** `policy` edited by hand as `edit` says, its certificate copied with both hashes recomputed. */
function handEdited(policy: Policy, edit: Partial<Policy>): Policy {
  const edited = { ...policy, ...edit };
  return parsePolicy({
    ...edited,
    certificate: {
      ...policy.certificate!,
      policySha256: policyTextSha256(edited),
      calibrationSha256: calibrationSha256(edited),
    },
  });
}

/** A good model's registered certificate, on version 2, which a person marks as requiring one. */
async function certifiedV2(v1: Policy = PROBE_POLICY) {
  const s = await decidedProbe(GOOD_MODEL, 1);
  await drawAndLabel(s, 250);
  const v2 = parsePolicy({ ...(await proposeProbe(s)), requireCertificate: true });
  expect(v2.certificate?.registered).toBeDefined();
  expect(v2.certificate?.modelSha256).toBe(FLOW_MODEL);
  return { s, v2, v1 };
}

describe("probe 2: the model and the population a registered certificate speaks for", () => {
  it("control: a new model file makes the certificate stale, and its confident answers go to people", async () => {
    const { s, v2 } = await certifiedV2();
    const record = await decideOne(s, [PROBE_POLICY, v2], answering(SURE, OTHER_MODEL), "M-0");
    expect(record).toMatchObject({ route: "human", reason: "uncertified" });
    expect(record.certificateProblem).toBe("certificate stale: model changed");
  }, 60_000);

  // HOLE A (high): the certificate's `modelSha256` (and `promptVersion`, and a cascade tier's) is
  // compared with the model that scored each decision (provenance.ts, certificateProblem), but
  // nothing compares it with the model that decided the certificate's sample: neither
  // registeredCertificateProblem (registered-certification.ts) nor the learn-then-test recompute
  // reads it, and no hash covers it (sampleLabelsSha256 hashes labels, answers and logits;
  // policySha256 and calibrationSha256 the policy's fields). So a lead who swaps the endpoint's
  // model file edits one field of the policy file, the certificate's modelSha256, to the new
  // file's hash (no hash to recompute): the certificate still verifies on its sample ("verified
  // on 250 labels") and the new model, never labelled, acts alone.
  it("HOLE A: a certificate whose modelSha256 is edited to a new model file does not let that model act alone", async () => {
    const { s, v2 } = await certifiedV2();
    const edited = parsePolicy({ ...v2, certificate: { ...v2.certificate!, modelSha256: OTHER_MODEL } });
    const record = await decideOne(s, [PROBE_POLICY, edited], answering(SURE, OTHER_MODEL), "M-1");
    // Should be: people, as no label of the new model backs the certificate.
    expect(record).toMatchObject({ route: "human", reason: "uncertified" });
  }, 60_000);

  // The same edit read through the verification apply, `decide status` and the decide path share.
  it("HOLE A (verify): a certificate naming another model than its sample's does not verify", async () => {
    const { s, v2 } = await certifiedV2();
    const edited = parsePolicy({ ...v2, certificate: { ...v2.certificate!, modelSha256: OTHER_MODEL } });
    const policies = new PolicyRegistry([PROBE_POLICY, edited]);
    expect((await verifyCertificate({ store: s.store, policies }, edited)).verified).toBe(false);
  }, 60_000);

  /** Version 1 with the off-options guard, its registered sample labelled, and the proposed v2 that keeps it. */
  async function guardedV2() {
    const guarded = parsePolicy({ ...PROBE_POLICY, minAllowedTokenMass: 0.5 });
    const s = await decidedProbe(GOOD_MODEL, 1);
    await drawAndLabel(s, 250);
    const v2 = parsePolicy({
      ...(await proposeProbe(s)),
      minAllowedTokenMass: 0.5,
      requireCertificate: true,
    });
    return { guarded, s, v2 };
  }

  it("control: the version the sample was drawn under sends a low-mass answer to people (off_options)", async () => {
    const { guarded, s, v2 } = await guardedV2();
    const record = await decideOne(s, [guarded, v2], answering(SURE, FLOW_MODEL, 0.2), "T-0");
    expect(record).toMatchObject({ route: "human", reason: "off_options" });
  }, 60_000);

  // HOLE B (medium): the off-options guard (`minAllowedTokenMass`) decides which confident answers
  // are automated (routing.ts), but it is in neither certificate hash (provenance.ts:
  // policyTextSha256 and calibrationSha256), decidesOtherwise (registered-certification.ts)
  // compares only maps, and certificateProblem compares only the threshold. So version 3 written
  // as version 2 without its guard (one field removed, nothing recomputed; apply's checkProposal
  // also lets a proposal change it, as a calibration field, certificate kept) keeps a verified
  // certificate and automates the answers that fit none of the options, a population no drawn
  // item came from (the sampled version escalated them).
  it("HOLE B: removing the off-options guard under a registered certificate does not automate what it guarded", async () => {
    const { guarded, s, v2 } = await guardedV2();
    const { minAllowedTokenMass: _guard, ...unguarded } = v2;
    const v3 = parsePolicy({ ...unguarded, version: 3 });
    expect(certificateProblem(v3)).toBeUndefined();
    const record = await decideOne(s, [guarded, v2, v3], answering(SURE, FLOW_MODEL, 0.2), "T-1");
    // Should be: people, as the certificate was never tested on answers below the guard.
    expect(record.route).toBe("human");
  }, 60_000);
});

describe("probe 2: the version a registered certificate is recomputed under", () => {
  // HOLE E (high): a registered certificate is recomputed under `labelled`, the version its
  // labelSource names, read from the policy registry (certificate-labels.ts), and decidesOtherwise
  // (registered-certification.ts) compares the certified version's maps with that version's
  // file, not with how the sample's decisions were made: the drawn records keep their own
  // topProbability, which nothing compares with the map. So a lead who edits the old version 1
  // file as well (temperature 1 -> 0.3: version 1 no longer decides anything, so nothing live
  // changes) and writes version 3 as version 2 at temperature 0.3 with its hashes recomputed gets
  // the certificate verified on version 3, the first probe's HOLE 1b again: an item at 0.67 under
  // the tested map (0.99 under 0.3) is automated.
  it("HOLE E: a sharper map does not verify when the sampled version's file is edited to match it", async () => {
    const { s, v2 } = await certifiedV2();
    const sharpV1 = parsePolicy({ ...PROBE_POLICY, temperature: 0.3 });
    const v3 = handEdited({ ...v2, version: 3 }, { temperature: 0.3 });
    const record = await decideOne(s, [sharpV1, v2, v3], answering([1.8, 0, 0, 0]), "E-1");
    expect(record.topProbability).toBeGreaterThan(v2.autoThreshold);
    // Should be: people, as the sample was tested under temperature 1, where this item is at 0.67.
    expect(record.route).toBe("human");
  }, 60_000);
  // HOLE E, by the options: the same route makes an option automatable that the sample could
  // never draw (the frame holds only decisions whose option may be automated): version 1's file
  // and version 3 both mark "remove" automatable (policySha256 recomputed on version 3 and equal
  // to version 1's as edited); the drawn records are the same, none chose "remove", so the
  // certificate recomputes as before and "remove" is automated at 0.99 under it.
  it("HOLE E (options): an option made automatable in the sampled version's file as well does not act alone", async () => {
    const { s, v2 } = await certifiedV2();
    const options = PROBE_POLICY.options.map((o) => (o.id === "remove" ? { ...o, automate: true } : o));
    const editedV1 = parsePolicy({ ...PROBE_POLICY, options });
    const v3 = handEdited({ ...v2, version: 3 }, { options });
    const record = await decideOne(s, [editedV1, v2, v3], answering([0, 0, 6, 0]), "E-2");
    expect(record.chosen).toBe("remove");
    // Should be: people, as no decision choosing "remove" was in the sample's frame.
    expect(record.route).toBe("human");
  }, 60_000);
});

describe("probe 2: the same-claim error budget", () => {
  // HOLE C (medium): plans share one error budget only between versions whose policySha256 and
  // calibrationSha256 are equal (request-certification.ts, sameClaimVersions). Those are hashes of
  // how the fields are written, not of how the version decides: offsets of 0 (optionBias
  // [0, 0, 0, 0]) leave every calibrated probability as it was (vector-scaling.ts: logits / T + 0)
  // but change calibrationSha256, so a lead whose plan failed writes the next version with zero
  // offsets (or a uniform prior, or an autoThreshold moved by 0.0001) and draws plan 1 again,
  // tested at 96%, as often as they like: the look-again the budget split exists to price.
  it("HOLE C: a version that decides every item as the last did (zero offsets) does not start the error budget again", async () => {
    const same = parsePolicy({ ...PROBE_POLICY, version: 2, optionBias: [0, 0, 0, 0] });
    expect(policyTextSha256(same)).toBe(policyTextSha256(PROBE_POLICY));
    expect(calibrationSha256(same)).not.toBe(calibrationSha256(PROBE_POLICY));
    const { first, again } = await nextVersionPlan(same);
    expect(first.plan?.level).toBe(0.96);
    expect(again.queued).toBe(50);
    // Should be: the second look at the same claim, at its smaller share (99.5%).
    expect(again.plan?.level).toBeGreaterThan(0.96);
  }, 60_000);

  // HOLE C, by the threshold: version 2 raises autoThreshold 0.85 -> 0.86, so calibrationSha256
  // differs and its plan is plan 1 again at 96%, yet its fixed sequence (the grid from the
  // strictest down to 0.86) is points plan 1 of version 1 tested already, on the same model and
  // maps: each of those thresholds gets a second look at a fresh 80% of alpha.
  it("HOLE C (threshold): a version raising only its threshold does not start the error budget again", async () => {
    const raised = parsePolicy({ ...PROBE_POLICY, version: 2, autoThreshold: 0.86 });
    const { first, again } = await nextVersionPlan(raised);
    expect(first.plan?.level).toBe(0.96);
    expect(again.queued).toBe(50);
    expect(again.frame.minProbability).toBe(0.86);
    const tested = first.plan!.thresholds;
    expect(again.plan?.thresholds.slice(0, -1).every((t) => tested.includes(t))).toBe(true);
    // Should be: a later look at thresholds already tested, at a smaller share than 96%.
    expect(again.plan?.level).toBeGreaterThan(0.96);
  }, 60_000);
});
