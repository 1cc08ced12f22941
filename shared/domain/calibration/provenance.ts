/**
 * What a certificate was made on, by hash, and whether it still applies: the policy text (question,
 * options, routing of options, layout), the calibration map and auto threshold, the labelled set,
 * and, checked against each decision, the model file and the prompt layout version that scored it.
 */
import { createHash } from "node:crypto";
import type { PolicyCertificate } from "../policy/certificate-schema.ts";
import type { Policy } from "../policy/policy.ts";
import { certificateCountsProblem } from "./certificate-check.ts";
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
  if (certificate.policySha256 !== policyTextSha256(policy)) return "certificate stale: policy changed";
  if (certificate.calibrationSha256 !== calibrationSha256(policy))
    return "certificate stale: calibration changed";
  if (!scoredBy) return undefined;
  if (certificate.modelSha256 === null) return "certificate stale: certified on an unnamed model";
  if (certificate.modelSha256 !== scoredBy.modelSha256) return "certificate stale: model changed";
  if (certificate.promptVersion !== scoredBy.promptVersion) return "certificate stale: prompt layout changed";
  return undefined;
}
