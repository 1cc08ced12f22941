/**
 * The pipeline's topology, defined once: queue and redrive settings, the event rules and their
 * patterns, and function settings. The CDK app deploys it and the local stand-ins mirror it, so
 * the two cannot drift apart.
 */
import { EVENT_SOURCE } from "../shared/events.ts";
import type { EventPattern } from "./local/event-pattern.ts";

/** Receives before a message goes to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/** The decide function's settings (the queue's visibility timeout is six times its timeout, as AWS advises). */
export const DECIDE_FUNCTION = {
  memoryMiB: 512,
  /** Above the longest an item can take (endpointAttempts × endpointTimeoutMs plus backoff). */
  timeoutSeconds: 120,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  /** Concurrent batches per endpoint instance: one model evaluates one request at a time. */
  concurrencyPerInstance: 2,
  /** Per call; with 3 tries and backoff an item takes at most about 76 s, under the 120 s timeout. */
  endpointTimeoutMs: 25_000,
  endpointAttempts: 3,
  publishLeaseMs: 60_000,
} as const;

/** The review intake function, which consumes the review queue (the human route). */
export const REVIEW_INTAKE_FUNCTION = { timeoutSeconds: 30, batchSize: 10 } as const;

/** Visibility timeout of the intake queue. */
export const INTAKE_VISIBILITY_SECONDS = DECIDE_FUNCTION.timeoutSeconds * 6;

/** Event rules: name, pattern and what they deliver to. */
export const RULES = {
  auto: {
    description: "Confident, automatable decisions go to the auto-action function",
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
