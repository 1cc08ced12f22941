/**
 * How a reviewed decision came to be labelled, and its chance of having been: what lets a label
 * back a certificate (README, "Ship a policy change safely"). A label backs a claim about
 * automatic actions only when whether it was labelled did not depend on the label and that chance
 * is known:
 *
 * - an **escalation** (below the threshold, uncertified, an option or a scope people always
 *   review, off the options) went to people because of its confidence and options alone: every
 *   decision like it was escalated, so its chance is 1 (a census of its band);
 * - an **audit sample** was drawn at its band's audit rate (`auditInclusionProbability`);
 * - a **certification sample** was drawn by a frame at its band's rate (`certification-sample.ts`).
 *
 * The draws are independent, so a decision's chance of being labelled is 1 − (1 − its audit or
 * escalation chance) × Π (1 − each frame's rate for it): an audit sample that a later frame also
 * covered counts for a little less than 1/π_audit, as it should.
 */
import type { DecisionRecord } from "../../decision-record.ts";
import type { Policy } from "../../policy/policy.ts";
import type { LabelKind } from "./certificate-units.ts";
import { type CertificationFrame, frameRate } from "./certification-sample.ts";

/** How a label was chosen, and the chance it had. */
export interface LabelSelection {
  readonly kind: LabelKind;
  readonly inclusionProbability: number;
}

/** Whether `record`'s chosen option may be automated under `version`. */
export function chosenAutomatable(record: Pick<DecisionRecord, "chosen">, version: Policy): boolean {
  const option = version.options.find((o) => o.id === record.chosen);
  return option?.automate === true && option.id !== version.outOfScopeOption;
}

/**
 * The chance an otherwise automatic decision of `version` had of an audit draw: the record's own,
 * else its version's flat rate.
 */
function auditChance(record: DecisionRecord, version: Policy): number {
  return record.auditInclusionProbability ?? version.auditSampleRate;
}

/** How `record` (of `version`) came to be labelled, given the certification frames known. */
export function selectionOf(
  record: DecisionRecord,
  version: Policy,
  frames: readonly CertificationFrame[],
): LabelSelection {
  const escalated = record.route === "human" && record.reason !== "audit_sample";
  const own = escalated ? 1 : auditChance(record, version);
  const member = {
    itemId: record.itemId,
    createdAt: record.createdAt,
    topProbability: record.topProbability ?? 0,
    automatable: chosenAutomatable(record, version),
  };
  const notDrawn = frames.reduce((p, frame) => p * (1 - frameRate(frame, member)), 1);
  const inclusionProbability = 1 - (1 - own) * notDrawn;
  const kind: LabelKind = record.certification
    ? "certification"
    : record.reason === "audit_sample"
      ? "audit"
      : "escalation";
  return { kind, inclusionProbability };
}

/**
 * Whether every automatic decision of `version` had a chance of a label: it audits them (a flat
 * rate or bands above 0). When it does not, only decisions inside a certification frame did, and
 * a certificate may only speak for those (`thresholdFloor`): thresholds below the lowest frame's
 * minimum, or any threshold when there is no frame, reach decisions no one could label.
 */
export function thresholdFloor(version: Policy, frames: readonly CertificationFrame[]): number {
  if (version.auditBands || version.auditSampleRate > 0) return 0;
  return frames.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...frames.map((f) => f.minProbability));
}
