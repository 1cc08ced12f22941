/**
 * Scores a live item under its policy's shadow candidate, beside the live call: started before
 * the live call so the two run at once, and never failing, so that the candidate can neither
 * delay a retry nor reject an item. An item outside the shadow sample (or a policy at share 0)
 * costs no endpoint call at all.
 */
import type { DecidesItems } from "../domain/decision-endpoint.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { inShadowSample, type ShadowScore, shadowScore } from "../domain/shadow.ts";
import { type CertificateVerdicts, certificateVerdictsFor } from "./calibration/certificate-labels.ts";

/**
 * What shadow scoring needs: the registry that holds the candidate, the endpoint, and the store
 * where a candidate that requires a certificate has it checked on its labels.
 */
export interface ShadowDependencies {
  readonly policies: PolicyRegistry;
  readonly endpoint: DecidesItems;
  readonly store: DecisionStore;
  readonly certificates?: CertificateVerdicts;
}

/**
 * Starts scoring `item` under the shadow candidate of `policy`; undefined when the item is not in
 * the shadow sample. The promise always resolves: a failure becomes `{ policyVersion, error }`.
 */
export function startShadow(
  item: Item,
  policy: Policy,
  deps: ShadowDependencies,
): Promise<ShadowScore> | undefined {
  const candidate = deps.policies.shadowOf(policy);
  if (!candidate || !inShadowSample(item.id, policy)) return undefined;
  const started = performance.now();
  const unverified = certificateVerdictsFor(deps).requiredProblem(candidate);
  return Promise.all([deps.endpoint.decide(item, candidate), unverified]).then(
    ([answer, problem]) => shadowScore(candidate, answer, item.id, performance.now() - started, problem),
    (error: unknown) => ({
      policyVersion: candidate.version,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  );
}
