/**
 * Whether a policy version's certificate is verified: its counts give its claim, and the labels
 * it names are in the decisions table and give the same certificate when it is recomputed on them
 * (`shared/domain/calibration/certificate/certificate-recompute.ts`). `decide status` says "certificate
 * verified" only after this check, and the decide path automates under `requireCertificate` only
 * when it passes and the certificate is pre-registered (`registered-kind.ts` says why), so that a
 * certificate written by hand (or edited) never automates. The labels
 * are read once per version and process ({@link CertificateVerdicts}): a bounded read of the
 * reviewed list between two times; a registered certificate's, from its own sample's records
 * alone (`registered-certification.ts`).
 */
import { certificateOnLabelsProblem } from "../../domain/calibration/certificate/certificate-recompute.ts";
import { requiredCertificateProblem } from "../../domain/calibration/certificate/registered-kind.ts";
import { certificateProblem } from "../../domain/calibration/provenance.ts";
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { reviewedLabels } from "../review/reviewed-labels.ts";
import { registeredCertificateProblem } from "./registered-certification.ts";

/** The outcome of the check. */
export type CertificateVerdict =
  | { readonly verified: true; readonly labels: number }
  | { readonly verified: false; readonly reason: string };

/** What the check reads. */
export interface CertificateLabelsDependencies {
  readonly store: DecisionStore;
  readonly policies: PolicyRegistry;
}

/** Checks `policy`'s certificate against the labels it names in the decisions table. */
export async function verifyCertificate(
  deps: CertificateLabelsDependencies,
  policy: Policy,
): Promise<CertificateVerdict> {
  const problem = certificateProblem(policy);
  if (problem) return { verified: false, reason: problem };
  const source = policy.certificate!.labelSource;
  if (!source)
    return {
      verified: false,
      reason:
        "certificate unverified: it does not say where its labels are; propose it again from the decisions table",
    };
  if (source.kind === "file")
    return {
      verified: false,
      reason: "certificate unverified: made from a labelled file, which is not at hand here",
    };
  const labelled = deps.policies.version(policy.id, source.policyVersion);
  if (!labelled)
    return {
      verified: false,
      reason: `certificate unverified: its labels are of ${policy.id}@${source.policyVersion}, which is not among the policies`,
    };
  if (source.kind === "sample") {
    // A registered certificate is recomputed from its own sample's records, never from other labels.
    const problem = await registeredCertificateProblem(deps.store, labelled, policy);
    return problem
      ? { verified: false, reason: `certificate unverified: ${problem}` }
      : { verified: true, labels: policy.certificate!.labels };
  }
  const read = await reviewedLabels(deps.store, labelled, source.since ?? undefined, source.until);
  const { rows, floor } = read;
  const where = `of ${policy.id}@${source.policyVersion} labelled ${source.since ? `from ${source.since} ` : ""}to ${source.until}`;
  // Drawn items not labelled by then count as they did when it was made: as wrong.
  const mismatch = certificateOnLabelsProblem(policy, [...rows, ...read.missing], where, floor);
  return mismatch
    ? { verified: false, reason: `certificate unverified: ${mismatch}` }
    : { verified: true, labels: rows.length };
}

/** How long a warm process keeps a certificate's verdict before reading its labels again. */
const VERDICT_MAX_AGE_MS = 10 * 60_000;

/**
 * The verdict of each policy version's certificate, checked once per process and again after
 * {@link VERDICT_MAX_AGE_MS} (a failed read is not remembered, so the next item tries again). The
 * decide path asks it only for policies that require a certificate.
 */
export class CertificateVerdicts {
  private readonly verdicts = new Map<string, { verdict: Promise<CertificateVerdict>; at: number }>();

  /**
   * @param maxAgeMs how long a verdict is kept before the labels are read again: a label
   *   corrected after a certificate was verified unverifies it within this time in a warm process.
   * @param elapsed a monotonic timer in milliseconds (a duration, not the wall clock).
   */
  constructor(
    private readonly deps: CertificateLabelsDependencies,
    private readonly maxAgeMs = VERDICT_MAX_AGE_MS,
    private readonly elapsed: () => number = () => performance.now(),
  ) {}

  /** The verdict of `policy`'s certificate. */
  of(policy: Policy): Promise<CertificateVerdict> {
    const key = `${policy.id}@${policy.version}`;
    const held = this.verdicts.get(key);
    if (held && this.elapsed() - held.at < this.maxAgeMs) return held.verdict;
    const verdict = verifyCertificate(this.deps, policy);
    this.verdicts.set(key, { verdict, at: this.elapsed() });
    verdict.catch(() => this.verdicts.delete(key));
    return verdict;
  }

  /**
   * Why `policy`'s certificate may not let it automate where it requires one, or undefined when
   * it may (or the policy does not require one): a failed read counts as unverified.
   */
  async requiredProblem(policy: Policy): Promise<string | undefined> {
    if (!policy.requireCertificate) return undefined;
    const kind = requiredCertificateProblem(policy, policy.certificate);
    if (kind) return kind;
    const verdict = await this.of(policy).catch(
      (error: unknown): CertificateVerdict => ({
        verified: false,
        reason: `certificate unverified: its labels could not be read (${error instanceof Error ? error.message : String(error)})`,
      }),
    );
    return verdict.verified ? undefined : verdict.reason;
  }
}

const verdictsByStore = new WeakMap<DecisionStore, CertificateVerdicts>();

/** The certificate checks a caller carries (`certificates`), else one per store for the life of the process. */
export function certificateVerdictsFor(
  deps: CertificateLabelsDependencies & { readonly certificates?: CertificateVerdicts },
): CertificateVerdicts {
  if (deps.certificates) return deps.certificates;
  let verdicts = verdictsByStore.get(deps.store);
  if (!verdicts) {
    verdicts = new CertificateVerdicts(deps);
    verdictsByStore.set(deps.store, verdicts);
  }
  return verdicts;
}
