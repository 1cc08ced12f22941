/**
 * The decision endpoint port: what the use cases need from whatever scores items (the SageMaker
 * endpoint, a plain HTTP server, the scorer in process, or a test double).
 */
import type { DecisionAnswer } from "./contracts/system-one/index.ts";
import type { Item } from "./item.ts";
import type { Policy } from "./policy/policy.ts";

/** What the endpoint said about one item, in the policy's option order. */
export interface EndpointDecision extends DecisionAnswer {
  /** Round trip of the call that answered. */
  readonly latencyMs: number;
}

/** Something that decides items (the SageMaker endpoint, or a test double). */
export interface DecidesItems {
  decide(item: Item, policy: Policy): Promise<EndpointDecision>;
  /**
   * Whether this deployment serves a cascade's later-tier model of that name. Absent: every model
   * a policy names (the local endpoint serves them all by name). A tier it does not serve is not
   * asked: the item goes to people as the tier before left it, instead of being refused.
   */
  serves?(model: string): boolean;
}
