/**
 * The event rules: which events each rule matches on the bus, what it delivers them to, and how
 * EventBridge retries a delivery before the event goes to the rule's dead-letter queue. The CDK app
 * creates the rules from these patterns and the local event bus matches with the same ones.
 *
 * Part of the topology: `../topology.ts` re-exports it.
 */
import type { EventPattern } from "../event-pattern.ts";
import { EVENT_SOURCE } from "../events.ts";

/** Event rules: name, pattern and what they deliver to. */
export const RULES = {
  auto: {
    description:
      "Confident, automatable decisions go to the auto-action queue, which the auto-action function consumes",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Made"], detail: { route: ["auto"] } },
  },
  human: {
    description: "Escalated decisions go to the review queue, which the review intake function consumes",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Made"], detail: { route: ["human"] } },
  },
  rejected: {
    description: "Rejected items go to a queue for inspection",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Rejected"] },
  },
  requested: {
    description: "Upstream 'Decision Requested' events feed the intake queue (the item is the detail)",
    pattern: { "detail-type": ["Decision Requested"], source: [{ "anything-but": [EVENT_SOURCE] }] },
  },
} as const satisfies Record<string, { description: string; pattern: EventPattern }>;

/** Name of a rule. */
export type RuleName = keyof typeof RULES;

/**
 * Delivery from a rule to its target: retries with backoff for up to a day, then the event goes
 * to the rule's own dead-letter queue (from which `decide replay` puts it on the bus again).
 */
export const RULE_DELIVERY = { retryAttempts: 8, maxEventAgeHours: 24 } as const;
