/**
 * An attacker's probe of the certificate gate (issue 40): ways to get a policy that requires a
 * certificate to act alone (route "auto", reason "confident") under a certificate that should not
 * allow it. The first block pins the attempts the gate refuses, with the refusal each one gets.
 * Each "HOLE" below was a hole found, failing on the code of 2026-12-06 before its fix: it asserts
 * what should happen, and its comment names the hole and where it was in the code.
 */
import { describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { checkProposal } from "../../shared/domain/calibration/proposal-check.ts";
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
import { requestCertification } from "../../shared/use-cases/calibration/request-certification.ts";
import { decideMessage } from "../../shared/use-cases/decide-message.ts";
import { loadGold } from "../../shared/use-cases/review/gold-items.ts";
import { decidedStore, FLOW_MODEL } from "../helpers/certification-store.ts";
import {
  BAD_MODEL as BAD,
  decidedProbe as decided,
  drawAndLabel,
  PROBE_GOAL as GOAL,
  GOOD_MODEL as GOOD,
  nextVersionPlan,
  PROBE_POLICY as POLICY,
  proposeProbe as propose,
  probeRecords as recordsOf,
  type ProbeSetting as Setting,
} from "../helpers/probe-flow.ts";

const LAYOUT = "choice-v1@policy-first";

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

/** An endpoint that answers `logits` as the model the flow's certificates name. */
function answering(logits: readonly number[]): DecidesItems {
  return {
    async decide() {
      return {
        logits: [...logits],
        allowedTokenMass: 0.95,
        modelSha256: FLOW_MODEL,
        promptSha256: "b".repeat(64),
        promptVersion: LAYOUT,
        latencyMs: 1,
      };
    },
  };
}

/** Decides one new item under `policies`' current version of the policy, on `s`'s store. */
async function decideOne(s: Setting, policies: Policy[], logits: readonly number[], id: string) {
  await decideMessage(JSON.stringify({ id, policy: POLICY.id, state: "a post" }), {
    policies: new PolicyRegistry(policies),
    store: s.store,
    endpoint: answering(logits),
    publisher: { publish: async () => undefined },
    publishLeaseMs: 1_000,
    now: () => new Date(Date.UTC(2026, 11, 20)),
    certificates: new CertificateVerdicts({ store: s.store, policies: new PolicyRegistry(policies) }),
  });
  return (await s.store.latest(id, POLICY.id))!;
}

// softmax([1.2, 0, 0, 0]) tops at 0.5: below the 0.85 frame, never in any sample.
const HALF = [1.2, 0, 0, 0];

describe("probe: attempts the gate refuses", () => {
  it("refuses a forged kind, a moved sample, a changed label, an uncovered tier and a plain hand edit", async () => {
    const s = await decided(GOOD, 1);
    await drawAndLabel(s, 250);
    const v2 = parsePolicy({ ...(await propose(s)), requireCertificate: true });
    const c = v2.certificate!;
    const policies = new PolicyRegistry([POLICY, v2]);
    expect(await verifyCertificate({ store: s.store, policies }, v2)).toEqual({
      verified: true,
      labels: 250,
    });

    // The registered method with the table as its label source: the schema refuses the file.
    const table = { kind: "table", policyVersion: 1, since: null, until: c.certifiedAt };
    expect(() => parsePolicy({ ...v2, certificate: { ...c, labelSource: table } })).toThrow(
      /a "pre-registered sample" certificate's labels are its sample/,
    );
    // A learn-then-test certificate with the table's labels: the kind alone refuses it.
    const { registered: _r, ...plain } = c;
    const ltt = parsePolicy({
      ...v2,
      certificate: {
        ...plain,
        method: "learn-then-test fixed-sequence, Clopper-Pearson",
        labelSource: table,
      },
    });
    expect(await new CertificateVerdicts({ store: s.store, policies }).requiredProblem(ltt)).toMatch(
      /^certificate not pre-registered \(learn-then-test on the labels held, not pre-registered\)/,
    );
    // Another sample id: not among the version's records.
    const moved = { ...c, labelSource: { ...c.labelSource!, sample: "cert-other" } } as typeof c;
    expect(await verifyCertificate({ store: s.store, policies }, { ...v2, certificate: moved })).toEqual({
      verified: false,
      reason: `certificate unverified: its sample cert-other is not among the records of ${POLICY.id}@1`,
    });
    // A looser level written on the certificate alone: recomputed from the records' plan.
    const looser = { ...c, registered: { ...c.registered!, level: 0.6 } };
    const verdict = await verifyCertificate({ store: s.store, policies }, { ...v2, certificate: looser });
    expect(verdict.verified).toBe(false);
    // Apply refuses a threshold edited by hand even with the hashes recomputed (the decide path
    // does not: HOLE 1a below).
    const lowered = handEdited(v2, { autoThreshold: 0.5 });
    expect(checkProposal(POLICY, { ...lowered, requireCertificate: undefined }).refusals).toEqual([
      `certificate: it certifies threshold ${c.threshold}, the version automates at 0.5`,
    ]);
    // A plain hand edit of the map (hashes left): stale.
    expect(certificateProblem({ ...v2, temperature: 0.5 })).toBe("certificate stale: calibration changed");
    // A cascade's later tier the certificate does not name: not covered.
    const cascade = parsePolicy({ ...v2, cascade: [{ model: "large", autoThreshold: 0.9, temperature: 1 }] });
    expect(certificateProblem(cascade, { modelSha256: FLOW_MODEL, promptVersion: LAYOUT, tier: 1 })).toBe(
      "certificate stale: it does not cover tier 2",
    );
    // One drawn label changed after the certificate: its records are not the set it names.
    const drawn = (await recordsOf(s)).find((r) => r.certification && r.status === "reviewed")!;
    const other = drawn.label === "allow" ? "restrict" : "allow";
    expect(await s.store.transition(drawn, "reviewed", "reviewed", { label: other })).toBe(true);
    expect((await verifyCertificate({ store: s.store, policies }, v2)).verified).toBe(false);
  }, 60_000);

  it("refuses a certificate whose maps and threshold the flow wrote: nothing at 0.5 is automated", async () => {
    const s = await decided(GOOD, 1);
    await drawAndLabel(s, 250);
    const v2 = parsePolicy({ ...(await propose(s)), requireCertificate: true });
    expect(v2.autoThreshold).toBeGreaterThan(0.85);
    const record = await decideOne(s, [POLICY, v2], HALF, "N-1");
    expect(record).toMatchObject({ route: "human", reason: "below_threshold" });
    expect(record.certificateProblem).toBeUndefined();
  }, 60_000);
});

describe("probe: holes found on 2026-12-06, refused since", () => {
  // HOLE 1 (high): a registered certificate is checked against its sample's records
  // (registered-certification.ts, registeredCertificateProblem) and against the policy it sits on
  // only through the hashes it carries itself (provenance.ts, certificateProblem). Both hashes are
  // plain SHA-256 of the policy's own fields, so anyone editing a policy file can recompute them.
  // (a) On the decide path nothing compares the certified threshold with the policy's
  // autoThreshold (only a cascade's tiers are compared; apply's checkProposal does compare it and
  // refuses "certificate: it certifies threshold 0.951, the version automates at 0.5", but a
  // policy file written by hand never goes through apply): a version 3 written by hand with the
  // certificate of version 2, autoThreshold 0.5 and the hashes recomputed automates an item at 0.5
  // under a certificate tested at 0.951.
  it("HOLE 1a: a registered certificate copied onto a hand-written version at a lower threshold does not let it act alone", async () => {
    const s = await decided(GOOD, 1);
    await drawAndLabel(s, 250);
    const v2 = parsePolicy({ ...(await propose(s)), requireCertificate: true });
    const v3 = handEdited({ ...v2, version: 3 }, { autoThreshold: 0.5 });
    const record = await decideOne(s, [POLICY, v2, v3], HALF, "N-2");
    // Should be: people, as the certificate was tested at 0.951.
    expect(record).toMatchObject({ route: "human", reason: "uncertified" });
  }, 60_000);

  // (b) Nothing compares the certified version's calibration map (or option routing) with the map
  // of the version the sample was drawn from (labelSource.policyVersion), whose records the
  // certificate is recomputed on. A temperature changed from 1 to 0.3 with the threshold kept
  // (checkProposal lets calibration fields change, so an --apply-proposal file edited so passes
  // apply too) verifies "certificate verified (pre-registered sample ...)", and the decide path
  // then automates an item whose top probability under the tested map was 0.6 (0.98 under 0.3).
  it("HOLE 1b: a registered certificate does not verify on a version whose map is not the one its sample was tested under", async () => {
    const s = await decided(GOOD, 1);
    await drawAndLabel(s, 250);
    const v2 = parsePolicy({ ...(await propose(s)), requireCertificate: true });
    const sharper = handEdited(v2, { temperature: 0.3 });
    const policies = new PolicyRegistry([POLICY, sharper]);
    // Should be: unverified (apply --from-table, decide status and the decide path share this check).
    expect((await verifyCertificate({ store: s.store, policies }, sharper)).verified).toBe(false);
  }, 60_000);

  // HOLE 7 (high): a registered certificate's claimed confidence (and target) are never compared
  // with its plan's goal. registeredCertificateProblem (registered-certification.ts) compares the
  // recomputed threshold, counts and level with the certificate's, and certificateCountsProblem
  // (certificate-check.ts) recomputes the bound at registered.level, but nothing checks that level
  // is registeredLevel(confidence, round), nor that maxError and confidence are the plan's; no
  // hash covers them either. A plan drawn at 2% with 50% confidence (tested at 60%) on a model
  // wrong 2.5% of the time certifies 0.9996 on 0 wrong of 57 (bound 1.6% at 60%); its
  // certificate with "confidence": 0.95 written over 0.5 by hand verifies, and passes the
  // requireCertificate licence (kind, and any check that reads the claimed confidence).
  it("HOLE 7: a registered certificate claiming another confidence than its plan's does not verify", async () => {
    const s = await decided({ ...BAD, confidentlyWrong: { above: 0.85, rate: 0.025 } }, 3);
    const loose = { maxError: 0.02, confidence: 0.5 };
    await drawAndLabel(s, 400, loose);
    const v2 = await propose(s, loose);
    const claimed = parsePolicy({ ...v2, certificate: { ...v2.certificate!, confidence: 0.95 } });
    const policies = new PolicyRegistry([POLICY, claimed]);
    // Should be: unverified, as the plan tested 60%, not the 96% a 95% claim is tested at.
    expect((await verifyCertificate({ store: s.store, policies }, claimed)).verified).toBe(false);
  }, 60_000);

  // HOLE 2 (high): the certification frame leaves out every decision "chosen for a label" before
  // (request-certification.ts, chosenForLabel: status pending_review or reviewed), and gold items
  // are such decisions. `decide review gold` lets the lead pick automated decisions whose answer
  // they know and move them into the queue (gold-items.ts, loadGold), and gold labels never back a
  // certificate either. A lead who loads the automated decisions known to be wrong (appeals,
  // complaints: the natural source of known answers) as gold purges them from the frame, and the
  // registered certificate then certifies 2% at 95% on 250 drawn decisions with 0 wrong, verified,
  // for a model wrong about 5 to 6% of the time among what it automates; the same seed labelled
  // honestly gets no certificate.
  it("HOLE 2: gold items chosen among wrong automated decisions do not buy a certificate", async () => {
    const s = await decided(BAD, 3);
    const known = (await recordsOf(s)).filter(
      (r) => r.status === "actioned" && s.truth.get(r.itemId) !== r.chosen,
    );
    const lines = known.map((r, i) => ({
      itemId: r.itemId,
      policy: POLICY.id,
      answer: s.truth.get(r.itemId)!,
      line: i + 1,
    }));
    const load = await loadGold({ store: s.store, policies: s.policies, now: s.now }, lines, {
      loadedBy: "lead",
    });
    expect(load.problems).toEqual([]);
    await drawAndLabel(s, 250);
    const v2 = await propose(s);
    // Should be: no certificate, as honest labelling of this seed gives (test below).
    expect(v2.certificate?.threshold ?? null).toBeNull();
  }, 60_000);

  it("control for HOLE 2: the same seed labelled honestly, without gold items, gets no certificate", async () => {
    const s = await decided(BAD, 3);
    const requested = await drawAndLabel(s, 250);
    expect(requested.queued).toBe(250);
    expect((await propose(s)).certificate?.threshold ?? null).toBeNull();
  }, 60_000);

  // HOLE 3 (medium): requireCertificate licenses automation under any registered certificate
  // that verifies, whatever its target: nothing compares its maxError and confidence with the
  // policy's maxAutoError (certificate-labels.ts requiredProblem, routing.ts). The lead picks the
  // goal (`--plan --max-auto-error 0.3 --confidence 0.5 --request N`; the ranges allow up to 50%
  // at 50%), so a policy that says maxAutoError 0.02 acts alone under a certificate that claims
  // only "≤ 30% wrong at 50% confidence" on a model wrong 6% of the time.
  it("HOLE 3: a certificate at a looser target than the policy's maxAutoError does not let it act alone", async () => {
    const s = await decided(BAD, 3);
    const loose = { maxError: 0.3, confidence: 0.5 };
    await drawAndLabel(s, 40, loose);
    const v2 = parsePolicy({ ...(await propose(s, loose)), requireCertificate: true, maxAutoError: 0.02 });
    // A confident item (0.99) of an automatable option.
    const record = await decideOne(s, [POLICY, v2], [6, 0, 0, 0], "N-3");
    // Should be: people, as the certificate does not speak for the policy's 2% budget.
    expect(record).toMatchObject({ route: "human", reason: "uncertified" });
  }, 60_000);

  // HOLE 4 (lower): the error budget is split across the plans of one version
  // (request-certification.ts: round = the version's earlier samples + 1), so a new version that
  // changes nothing a certificate is made on (same text, maps, threshold and model: here only its
  // audit rate) starts again at plan 1, tested at 96%: a lead whose plan failed may bump the
  // version and look again at a fresh 80% share of α, as often as they like.
  it("HOLE 4: a version identical in what is certified does not start the error budget again", async () => {
    const bumped = parsePolicy({ ...POLICY, version: 2, auditSampleRate: 0.04 });
    expect(policyTextSha256(bumped)).toBe(policyTextSha256(POLICY));
    expect(calibrationSha256(bumped)).toBe(calibrationSha256(POLICY));
    const { first, again } = await nextVersionPlan(bumped);
    expect(first.plan?.level).toBe(0.96);
    expect(again.queued).toBe(50);
    // Should be: the second look at the same claim, tested at its smaller share (99.5%).
    expect(again.plan?.level).toBeGreaterThan(0.96);
  }, 60_000);
});

describe("a policy that requires a certificate from its first version", () => {
  // Found by the probe: every decision such a version would automate waits as "uncertified", and
  // the frame left out everything waiting, so no sample could ever be drawn (queued 0).
  it("draws its certification sample among the decisions held back as uncertified", async () => {
    const store = new InMemoryDecisionStore();
    const policy = parsePolicy({ ...POLICY, requireCertificate: true });
    await decidedStore(store, policy, GOOD, 9);
    const out = await requestCertification(
      { store, now: () => new Date(Date.UTC(2026, 11, 3)) },
      { policy, size: 50, minProbability: 0.85, order: "first", goal: GOAL },
    );
    expect(out.queued).toBe(50);
    expect(out.plan?.round).toBe(1);
  }, 60_000);
});
