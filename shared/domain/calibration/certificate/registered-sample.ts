/**
 * A registered plan's sample read back from the decision records that carry it, and its
 * certificate computed from them: the one reading used where the certificate is made (`decide
 * calibrate --propose`) and where it is recomputed to be verified (`certificate-labels.ts`), so
 * both count the same drawn decisions the same way. A record whose certification field does not
 * pass the record schema, or names another plan than its sample's, is left out, and so counts as
 * a drawn decision not found: wrong.
 */
import type { DecisionRecord } from "../../decision-record.ts";
import type { Policy } from "../../policy/policy.ts";
import { labelSetSha256 } from "../provenance.ts";
import type { RegisteredResult } from "./certificate.ts";
import type { CertifiedItem } from "./certificate-units.ts";
import { groupKeyOf } from "./group-key.ts";
import { chosenAutomatable } from "./label-selection.ts";
import { certifyRegistered } from "./registered-certificate.ts";
import { certificationDrawSchema, type RegisteredPlan } from "./registered-plan.ts";

/** One registered plan and the records its sample drew. */
export interface PlanSample {
  readonly sample: string;
  readonly drawnAt: string;
  readonly plan: RegisteredPlan;
  readonly records: readonly DecisionRecord[];
}

/** The registered plans among `records` of `version`, oldest draw first, each with its valid records. */
export function planSamples(records: readonly DecisionRecord[], version: number): PlanSample[] {
  const bySample = new Map<string, { drawnAt: string; plan: RegisteredPlan; records: DecisionRecord[] }>();
  const sorted = records
    .filter((r) => r.policyVersion === version && r.certification?.plan !== undefined)
    .toSorted((a, b) => (a.itemId < b.itemId ? -1 : 1));
  for (const r of sorted) {
    const parsed = certificationDrawSchema.safeParse(r.certification);
    if (!parsed.success || !parsed.data.plan || parsed.data.plan.policyVersion !== version) continue;
    const { sample, drawnAt, plan } = parsed.data;
    const held = bySample.get(sample);
    if (!held) bySample.set(sample, { drawnAt, plan, records: [r] });
    else if (JSON.stringify(held.plan) === JSON.stringify(plan) && held.drawnAt === drawnAt)
      held.records.push(r);
  }
  return [...bySample.entries()]
    .map(([sample, s]) => ({ sample, ...s }))
    .sort((a, b) => (a.drawnAt < b.drawnAt ? -1 : a.drawnAt > b.drawnAt ? 1 : 0));
}

/** Whether `r` holds a settled label given at or before `until` (a first review of two is not one). */
function settledBy(r: DecisionRecord, until: string): boolean {
  return r.status === "reviewed" && r.label !== undefined && (r.reviewedAt ?? r.updatedAt) <= until;
}

/**
 * The drawn decisions as the certificate sees them: the acting model's calibrated top probability
 * and chosen option as the version decided them (what the draw read), wrong when the settled label
 * is another option or there is none by `until`.
 */
function drawnItems(s: PlanSample, policy: Policy, until: string): CertifiedItem[] {
  return s.records.map((r) => {
    const settled = settledBy(r, until);
    return {
      confidence: r.topProbability ?? 0,
      wrong: !settled || r.label !== r.chosen,
      automatable: chosenAutomatable(r, policy),
      group: groupKeyOf(r),
      key: r.itemId,
      // A reviewer's "duplicate of" mark sets the record's own group (`group-key.ts`).
      ...(typeof r.group === "string" && r.group !== "" ? { marked: true } : {}),
      kind: "certification" as const,
      ...(settled ? {} : { unlabelled: true }),
    };
  });
}

/** The registered certificate of `s` (drawn from `policy`'s version) on the labels settled by `until`. */
export function certifySample(s: PlanSample, policy: Policy, until: string): RegisteredResult {
  return certifyRegistered(s.plan, s.sample, drawnItems(s, policy, until));
}

/**
 * The set the certificate names: each drawn decision with its settled label (or none) and the
 * answer it was judged by, so that a changed label or answer changes the hash.
 */
export function sampleLabelsSha256(s: PlanSample, policy: Policy, until: string): string {
  const ids = policy.options.map((o) => o.id);
  return labelSetSha256(
    s.records.map((r) => ({
      group: r.itemId,
      label: settledBy(r, until) ? ids.indexOf(r.label!) : -1,
      logits: [r.topProbability ?? 0, ids.indexOf(r.chosen ?? ""), ...(r.rawLogits ?? [])],
    })),
  );
}
