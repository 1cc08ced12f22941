/**
 * Scores a live item under its policy's shadow candidate, beside the live call: started before
 * the live call so the two run at once, and never failing, so that the candidate can neither
 * delay a retry nor reject an item. An item outside the shadow sample (or a policy at share 0)
 * costs no endpoint call at all.
 */
import type { DecidesItems } from "../domain/decision-endpoint.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { inShadowSample, type ShadowScore, shadowScore } from "../domain/shadow.ts";

/** What shadow scoring needs: the registry that holds the candidate and the endpoint. */
export interface ShadowDependencies {
  readonly policies: PolicyRegistry;
  readonly endpoint: DecidesItems;
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
  return deps.endpoint.decide(item, candidate).then(
    (answer) => shadowScore(candidate, answer, item.id, performance.now() - started),
    (error: unknown) => ({
      policyVersion: candidate.version,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  );
}
