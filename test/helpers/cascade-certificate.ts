/**
 * A cascade's learn-then-test certificate written by hand for tests that read its provenance: it
 * names every tier as the policy runs them (model name, model file, prompt layout, threshold and
 * calibration), with counts that give its claim, so only what a test edits afterwards can make
 * it stale.
 */
import { clopperPearsonUpper } from "../../shared/domain/calibration/certificate/binomial.ts";
import { calibrationSha256, policyTextSha256 } from "../../shared/domain/calibration/provenance.ts";
import { CERTIFICATE_METHOD } from "../../shared/domain/policy/certificate-schema.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";

/** The model files and prompt layout the certificate names. */
export interface CascadeFiles {
  /** The first tier's model file hash. */
  readonly first: string;
  /** Every later tier's model file hash. */
  readonly later: string;
  readonly layout: string;
  /** Automated decisions among the labels, none wrong. @default 149 of 300 */
  readonly automated?: number;
  readonly labels?: number;
}

/** `policy` with a certificate made on its own tiers, at 2% with 95% confidence. */
export function cascadeCertified(policy: Policy, files: CascadeFiles): Policy {
  const { automated = 149, labels = 300 } = files;
  const tier = (
    model: string | undefined,
    modelSha256: string,
    t: Parameters<typeof calibrationSha256>[0],
  ) => ({
    model,
    modelSha256,
    promptVersion: files.layout,
    threshold: t.autoThreshold,
    calibrationSha256: calibrationSha256(t),
  });
  return parsePolicy({
    ...policy,
    certificate: {
      maxError: 0.02,
      confidence: 0.95,
      method: CERTIFICATE_METHOD,
      threshold: policy.autoThreshold,
      bound: Number(clopperPearsonUpper(0, automated, 0.95).toPrecision(4)),
      automated,
      errors: 0,
      labels,
      coverage: Number((automated / labels).toFixed(4)),
      modelSha256: files.first,
      promptVersion: files.layout,
      policySha256: policyTextSha256(policy),
      calibrationSha256: calibrationSha256(policy),
      labelsSha256: "c".repeat(64),
      certifiedAt: "2026-12-01T00:00:00.000Z",
      tiers: [
        tier(policy.model, files.first, policy),
        ...(policy.cascade ?? []).map((t) => tier(t.model, files.later, t)),
      ],
    },
  });
}
