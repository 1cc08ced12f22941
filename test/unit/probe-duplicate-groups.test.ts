/**
 * Probe of the certificate gate (issue 40): near-duplicate marks inside a registered sample. A
 * group of near-duplicates is one unit whose vote is one member's, drawn by a public hash of the
 * group and the member (`certificate-units.ts`), on the premise that near-duplicates share one
 * label. `markDuplicate` (`shared/use-cases/review/mark-duplicate.ts`) refuses two items only
 * when both are labelled already and differently; marking first and labelling after is not
 * refused, nor is a drawn item left unlabelled in a group, nor two members with one label and
 * different chosen options. So a reviewer who marks each drawn item they would label wrong as a
 * "duplicate" of a drawn item the model got right (one more confident, whose hash wins the draw)
 * and then labels every drawn item honestly hides every error from the certificate.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { groupKeyOf } from "../../shared/domain/calibration/certificate/group-key.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { verifyCertificate } from "../../shared/use-cases/calibration/certificate-labels.ts";
import { markDuplicate } from "../../shared/use-cases/review/mark-duplicate.ts";
import {
  BAD_MODEL,
  decidedProbe,
  drawProbe,
  labelTruly,
  PROBE_POLICY,
  type ProbeSetting,
  probeRecords,
  proposeProbe,
} from "../helpers/probe-flow.ts";

/** The hash `certificate-units.ts` draws a group's vote with (the smaller −ln u wins). */
const uniform = (text: string) => (createHash("sha256").update(text).digest().readUInt32BE(0) + 1) / 2 ** 32;

/** Whether `right` would carry the vote of a group of `right` and `wrong` (equal weights). */
const wins = (right: DecisionRecord, wrong: DecisionRecord) => {
  const group = groupKeyOf(right);
  return uniform(`${group}\u0000${right.itemId}`) > uniform(`${group}\u0000${wrong.itemId}`);
};

/** Marks each wrong drawn item into the group of an unused right one, more confident, that wins its vote. */
async function hideErrors(s: ProbeSetting, drawn: readonly DecisionRecord[]): Promise<number> {
  const isWrong = (r: DecisionRecord) => s.truth.get(r.itemId) !== r.chosen;
  const used = new Set<string>();
  let hidden = 0;
  for (const x of drawn.filter(isWrong)) {
    const y = drawn.find(
      (r) => !isWrong(r) && !used.has(r.itemId) && r.topProbability! > x.topProbability! && wins(r, x),
    );
    if (!y) continue;
    used.add(y.itemId);
    const key = { itemId: x.itemId, policyId: x.policyId, policyVersion: x.policyVersion };
    await markDuplicate(key, y.itemId, s.lead, s.review);
    hidden++;
  }
  return hidden;
}

describe("probe: near-duplicate marks in a registered sample", () => {
  // HOLE 6 (high): marking before labelling puts an item the model got wrong into one unit with
  // one it got right; the unit's vote is the right one's (by a hash anyone can compute), and the
  // certificate counts no error. Seed 3 of a model wrong 6% of the time at or above 0.85, 400
  // drawn, 26 of them wrong: honestly labelled, no certificate (the control below); with 26 marks
  // and the same honest labels, "0 wrong of 374" (Fay-Feuer, bound 1.61% at 96%) certifies 0.85,
  // verified.
  it("HOLE 6: marking wrong drawn items as duplicates of right ones does not buy a certificate", async () => {
    const s = await decidedProbe(BAD_MODEL, 3);
    const { drawn } = await drawProbe(s, 400);
    expect(await hideErrors(s, drawn)).toBeGreaterThan(0);
    // Every drawn item then labelled with its truth.
    const marked = (await probeRecords(s)).filter((r) => r.certification);
    await labelTruly(s, marked);
    const v2 = await proposeProbe(s);
    const policies = new PolicyRegistry([PROBE_POLICY, v2]);
    // Should be: no certificate, as the same labels without the marks give.
    expect(v2.certificate?.threshold ?? null).toBeNull();
    expect((await verifyCertificate({ store: s.store, policies }, v2)).verified).toBe(false);
  }, 60_000);

  // HOLE 6, second route (high): the reviewer skips each drawn item they would label wrong and
  // marks it a duplicate of a right one instead. A drawn item left unlabelled should count as
  // wrong (issue 40, finding 5), but inside a group it is one member whose vote the hash gives to
  // the labelled right one, so the skip vanishes as it did before the registered plan.
  it("HOLE 6b: a skipped draw marked a duplicate of a right one still counts against the claim", async () => {
    const s = await decidedProbe(BAD_MODEL, 3);
    const { drawn } = await drawProbe(s, 400);
    const isWrong = (r: DecisionRecord) => s.truth.get(r.itemId) !== r.chosen;
    await labelTruly(
      s,
      drawn.filter((r) => !isWrong(r)),
    );
    expect(await hideErrors(s, drawn)).toBe(26);
    const v2 = await proposeProbe(s);
    expect(v2.certificate?.registered?.unlabelled).toBe(26);
    // Should be: no certificate, as 26 drawn items left unlabelled count as wrong.
    expect(v2.certificate?.threshold ?? null).toBeNull();
  }, 60_000);

  it("control for HOLE 6: the same draw labelled honestly without marks gets no certificate", async () => {
    const s = await decidedProbe(BAD_MODEL, 3);
    const { drawn } = await drawProbe(s, 400);
    expect(drawn.filter((r) => s.truth.get(r.itemId) !== r.chosen).length).toBe(26);
    await labelTruly(s, drawn);
    expect((await proposeProbe(s)).certificate?.threshold ?? null).toBeNull();
  }, 60_000);
});
