/**
 * What a certificate was made on, by hash, and whether it still applies: the policy text (question,
 * options, routing of options, layout), the calibration map and auto threshold, the labelled set,
 * and, checked against each decision, the model file and the prompt layout version that scored it.
 */
import { createHash } from "node:crypto";
import type { PolicyCertificate } from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import { certificateCountsProblem } from "./certificate/certificate-check.ts";
import { CALIBRATION_MAP_KEYS } from "./map-schema.ts";
import type { LabelledLogits } from "./temperature.ts";

const sha256 = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/** The policy text a certificate holds for: what the model is asked and which options may be automated. */
export function policyTextSha256(policy: Policy): string {
  return sha256({
    id: policy.id,
    type: policy.type,
    question: policy.question,
    options: policy.options.map((o) => ({ id: o.id, description: o.description, automate: o.automate })),
    outOfScopeOption: policy.outOfScopeOption ?? null,
    layout: policy.layout,
    optionOrder: policy.optionOrder ?? "declared",
  });
}

/**
 * How `policy` decides, hashed: its text and, for every model of its cascade, the model, map,
 * threshold and off-options floor. A registered plan writes it on its sample's records when drawn,
 * so that a certificate is never recomputed under a version file edited since (`tiers`: the
 * policy's views per model, first to last).
 */
export function decisionRulesSha256(policy: Policy, tiers: readonly Policy[]): string {
  return sha256({
    text: policyTextSha256(policy),
    tiers: tiers.map((t) => ({
      model: t.model ?? null,
      ...Object.fromEntries(CALIBRATION_MAP_KEYS.map((key) => [key, t[key] ?? null])),
    })),
  });
}

/** The calibration map and threshold a certificate holds for. */
export function calibrationSha256(
  policy: Pick<Policy, "prior" | "temperature" | "optionBias" | "autoThreshold">,
): string {
  return sha256({
    prior: policy.prior ?? null,
    temperature: policy.temperature,
    optionBias: policy.optionBias ?? null,
    autoThreshold: policy.autoThreshold,
  });
}

/** The labelled set: item, label and logits of every row, in a stable order. */
export function labelSetSha256(rows: readonly LabelledLogits[]): string {
  const lines = rows.map((r, i) => `${r.group ?? `#${i}`}\t${r.label}\t${r.logits.join(",")}`).sort();
  return createHash("sha256").update(lines.join("\n")).digest("hex");
}

/** The single model and prompt layout the rows name, or null where they name none or several. */
export function provenanceOf(rows: readonly LabelledLogits[]): {
  modelSha256: string | null;
  promptVersion: string | null;
  models: string[];
  promptVersions: string[];
} {
  const models = [...new Set(rows.flatMap((r) => (r.modelSha256 ? [r.modelSha256] : [])))];
  const promptVersions = [...new Set(rows.flatMap((r) => (r.promptVersion ? [r.promptVersion] : [])))];
  const one = (values: string[], all: boolean) => (values.length === 1 && all ? values[0]! : null);
  return {
    modelSha256: one(
      models,
      rows.every((r) => r.modelSha256),
    ),
    promptVersion: one(
      promptVersions,
      rows.every((r) => r.promptVersion),
    ),
    models,
    promptVersions,
  };
}

/** What scored a decision, as the decide path knows it. */
export interface ScoredBy {
  readonly modelSha256: string;
  readonly promptVersion: string;
  /** Which tier of a cascade scored it (0: the first). @default 0 */
  readonly tier?: number;
}

/**
 * What scored a stored decision, as the decide path checked its certificate: the record's model
 * and prompt layout are the acting tier's (or the last to pass it on), that tier being the last
 * of its `tiers`. Undefined when the record does not say.
 */
export function scoredByOf(record: {
  readonly modelSha256?: string | undefined;
  readonly promptVersion?: string | undefined;
  readonly tiers?: readonly unknown[] | undefined;
}): ScoredBy | undefined {
  if (!record.modelSha256 || !record.promptVersion) return undefined;
  const tier = Math.max(0, (record.tiers?.length ?? 1) - 1);
  return { modelSha256: record.modelSha256, promptVersion: record.promptVersion, tier };
}

// The decide path asks for every item: a certificate object's counts are checked once.
const countsChecked = new WeakMap<PolicyCertificate, string | undefined>();

function countsProblem(certificate: PolicyCertificate): string | undefined {
  if (!countsChecked.has(certificate)) countsChecked.set(certificate, certificateCountsProblem(certificate));
  return countsChecked.get(certificate);
}

/**
 * Why `policy`'s certificate does not hold (for the decision `scoredBy`, when given), or
 * undefined when it does: "no certificate", "certificate invalid: ..." (its own counts do not
 * give its claim), "certificate stale: model changed", ...
 */
export function certificateProblem(policy: Policy, scoredBy?: ScoredBy): string | undefined {
  const certificate: PolicyCertificate | undefined = policy.certificate;
  if (!certificate) return "no certificate";
  const invalid = countsProblem(certificate);
  if (invalid) return invalid;
  if (certificate.threshold === null) return "certificate: no threshold qualified";
  // The hashes below are the policy's own fields, so a hand-edited file can carry them: the
  // threshold it automates at is compared with what was certified, as apply compares it.
  if (policy.autoThreshold < certificate.threshold)
    return `certificate does not cover this version: it certifies threshold ${certificate.threshold}, the version automates at ${policy.autoThreshold}`;
  if (certificate.policySha256 !== policyTextSha256(policy)) return "certificate stale: policy changed";
  if (certificate.calibrationSha256 !== calibrationSha256(policy))
    return "certificate stale: calibration changed";
  const tiers = tiersProblem(policy, certificate);
  if (tiers) return tiers;
  return scoredBy ? scoredByProblem(certificate, scoredBy) : undefined;
}

/**
 * Why `certificate` does not speak for a decision `scoredBy` made: it covers no such tier, or
 * names another model or prompt layout for it ("certificate stale: ..."); undefined when it does.
 * The part of {@link certificateProblem} about the decision rather than the policy file.
 */
export function scoredByProblem(certificate: PolicyCertificate, scoredBy: ScoredBy): string | undefined {
  const index = scoredBy.tier ?? 0;
  const tier = index === 0 ? certificate : certificate.tiers?.[index];
  const of = index === 0 ? "" : ` of tier ${index + 1}`;
  if (!tier) return `certificate stale: it does not cover tier ${index + 1}`;
  if (tier.modelSha256 === null) return `certificate stale: certified on an unnamed model${of}`;
  if (tier.modelSha256 !== scoredBy.modelSha256) return `certificate stale: model${of} changed`;
  if (tier.promptVersion !== scoredBy.promptVersion) return `certificate stale: prompt layout${of} changed`;
  return undefined;
}

/**
 * Why a cascade's certificate no longer fits the policy's tiers: another number of tiers, a tier
 * asking another model, or a tier's calibration or threshold changed (the first tier's is checked
 * with the policy's own). A certificate without tiers speaks for the first tier alone, as before.
 */
function tiersProblem(policy: Policy, certificate: PolicyCertificate): string | undefined {
  const tiers = certificate.tiers;
  if (!tiers) return undefined;
  const later = policy.cascade ?? [];
  if (tiers.length !== later.length + 1) return "certificate stale: the cascade's tiers changed";
  const first = tiers[0]!;
  if (
    first.modelSha256 !== certificate.modelSha256 ||
    first.promptVersion !== certificate.promptVersion ||
    first.threshold !== certificate.threshold ||
    first.calibrationSha256 !== certificate.calibrationSha256 ||
    first.model !== policy.model
  )
    return "certificate stale: tier 1 changed";
  for (const [i, tier] of later.entries()) {
    const certified = tiers[i + 1]!;
    if (certified.model !== tier.model) return `certificate stale: tier ${i + 2}'s model changed`;
    if (certified.threshold !== tier.autoThreshold || certified.calibrationSha256 !== calibrationSha256(tier))
      return `certificate stale: tier ${i + 2}'s calibration changed`;
  }
  return undefined;
}
