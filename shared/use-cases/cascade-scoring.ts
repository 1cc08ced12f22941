/**
 * Scores an item through its policy's tiers (`shared/domain/cascade.ts`): the first model, then
 * each later one only while the tier before passes the item on. Each tier's answer is read as the
 * decide path reads any answer: calibrated with that tier's map and routed with its threshold.
 * A failure of any tier fails the item as a failure of the first would (the message returns to
 * its queue, or the item is rejected when the endpoint refused it), so an item is decided whole
 * or not at all, and a redelivery asks the tiers again from the first. A later tier whose model
 * this deployment does not serve (`DecidesItems.serves`) is not asked: the item goes to people
 * as the tier before passed it on, which is what the policy does without that tier. Each tier's
 * answer is bound to its own model: a later tier's answer that carries the model file hash of a
 * tier before it (the endpoint answered with that tier's model, not the one asked) is not that
 * tier's answer and is never acted on, whether or not the policy requires a certificate; the
 * item goes to people as the tier before passed it on, as for a tier not served.
 */
import { calibratedProbabilities } from "../domain/calibration/map.ts";
import { passesOn, type TierAnswer, tierCount, tierPolicy } from "../domain/cascade.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { type Routing, routeDecision } from "../domain/routing.ts";

/** One tier's answer on an item, read and routed under that tier's view of the policy. */
export interface TierOutcome {
  /** The policy as this tier reads it (its model, calibration, threshold). */
  readonly policy: Policy;
  readonly decision: EndpointDecision;
  /** Calibrated, in the policy's option order. */
  readonly probabilities: number[];
  readonly routing: Routing;
}

/**
 * Asks `policy`'s tiers in order until one does not pass the item on, or the last has answered;
 * returns every answer, the acting (or last) tier's last. `unverified`: why the certificate the
 * policy requires did not verify on its labels, where the caller checked (routing then
 * automates nothing).
 */
export async function scoreThroughTiers(
  item: Item,
  policy: Policy,
  endpoint: DecidesItems,
  unverified?: string,
): Promise<TierOutcome[]> {
  const outcomes: TierOutcome[] = [];
  const tiers = tierCount(policy);
  for (let index = 0; index < tiers; index++) {
    const view = tierPolicy(policy, index);
    if (index > 0 && view.model && endpoint.serves && !endpoint.serves(view.model)) break;
    const decision = await endpoint.decide(item, view);
    if (answeredByEarlierTier(decision, outcomes)) break;
    const probabilities = calibratedProbabilities(decision.logits, view);
    const mass = decision.allowedTokenMass;
    // A later tier is covered only by a cascade's certificate naming it (`certificateProblem`).
    const scoredBy = { ...decision, tier: index };
    const routing = routeDecision(view, probabilities, item.id, mass, scoredBy, unverified, policy);
    outcomes.push({ policy: view, decision, probabilities, routing });
    if (!passesOn(routing.reason)) break;
  }
  return outcomes;
}

/**
 * Whether `decision` carries the model file hash of a tier already asked: each tier names another
 * model (the policy refuses a model asked twice), so that answer came from the wrong model.
 */
function answeredByEarlierTier(decision: EndpointDecision, earlier: readonly TierOutcome[]): boolean {
  return earlier.some((outcome) => outcome.decision.modelSha256 === decision.modelSha256);
}

/** The answer a record keeps of one tier. */
export function tierAnswer(outcome: TierOutcome): TierAnswer {
  const { policy, decision, probabilities, routing } = outcome;
  return {
    ...(policy.model ? { model: policy.model } : {}),
    modelSha256: decision.modelSha256,
    promptSha256: decision.promptSha256,
    promptVersion: decision.promptVersion,
    distribution: Object.fromEntries(policy.options.map((option, i) => [option.id, probabilities[i]!])),
    rawLogits: decision.logits,
    chosen: routing.chosen,
    topProbability: routing.topProbability,
    reason: routing.reason,
    allowedTokenMass: decision.allowedTokenMass,
    temperature: policy.temperature,
    latencyMs: Math.round(decision.latencyMs),
  };
}
