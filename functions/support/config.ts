/**
 * Environment of the Lambda functions, read once at start; a missing variable fails fast with
 * its name, and a number that is not one fails with its name and value. Defaults come from
 * `shared/domain/topology.ts`, the one place a timeout, attempt count or lease is written.
 */

import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { DECIDE_FUNCTION, DECIDE_QUEUES, REVIEW } from "../../shared/domain/topology.ts";
import type { DeliveryLimits } from "../../shared/use-cases/failed-delivery.ts";

/** Reads a required variable or throws naming it. */
export function requireEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === "") throw new Error(`environment variable ${name} is required`);
  return value;
}

/** Settings of the decide function. */
export interface DecideSettings {
  readonly endpointName: string;
  readonly endpointTimeoutMs: number;
  readonly endpointAttempts: number;
  /** First backoff between endpoint tries (the topology's; not set by the environment). */
  readonly endpointBaseDelayMs: number;
  readonly publishLeaseMs: number;
  /** Items per endpoint call; 1 sends each item alone. */
  readonly endpointBatchItems: number;
  readonly endpointBatchWindowMs: number;
  /** Largest body of a batched call (the topology's; not set by the environment). */
  readonly endpointBatchBodyBytes: number;
}

/** Reads the decide function's settings from `env`. */
export function decideSettings(env: NodeJS.ProcessEnv = process.env): DecideSettings {
  return {
    endpointName: requireEnv(FUNCTION_ENV.DECISION_ENDPOINT_NAME, env),
    endpointTimeoutMs: positiveInteger(
      FUNCTION_ENV.ENDPOINT_TIMEOUT_MS,
      DECIDE_FUNCTION.endpointTimeoutMs,
      env,
    ),
    endpointAttempts: positiveInteger(FUNCTION_ENV.ENDPOINT_ATTEMPTS, DECIDE_FUNCTION.endpointAttempts, env),
    endpointBaseDelayMs: DECIDE_FUNCTION.endpointBaseDelayMs,
    publishLeaseMs: positiveInteger(FUNCTION_ENV.PUBLISH_LEASE_MS, DECIDE_FUNCTION.publishLeaseMs, env),
    endpointBatchItems: positiveInteger(
      FUNCTION_ENV.ENDPOINT_BATCH_ITEMS,
      DECIDE_FUNCTION.endpointBatchItems,
      env,
    ),
    endpointBatchWindowMs: positiveInteger(
      FUNCTION_ENV.ENDPOINT_BATCH_WINDOW_MS,
      DECIDE_FUNCTION.endpointBatchWindowMs,
      env,
    ),
    endpointBatchBodyBytes: DECIDE_FUNCTION.endpointBatchBodyBytes,
  };
}

/**
 * The decide function's limits on a failed delivery: item failures before it dead-letters, the
 * queue's own receive limit (keep MAX_RECEIVE_COUNT equal to the redrive policy's), and the
 * overload backoff (its first wait the fleet's expected wait when the follower's reading is recent).
 */
export function deliverySettings(env: NodeJS.ProcessEnv = process.env): DeliveryLimits {
  const backoff = DECIDE_QUEUES.overloadBackoff;
  return {
    maxItemFailures: positiveInteger(FUNCTION_ENV.MAX_ITEM_FAILURES, DECIDE_QUEUES.maxItemFailures, env),
    maxReceiveCount: positiveInteger(FUNCTION_ENV.MAX_RECEIVE_COUNT, DECIDE_QUEUES.maxReceiveCount, env),
    overloadBackoff: {
      firstSeconds: positiveInteger(FUNCTION_ENV.OVERLOAD_BACKOFF_FIRST_SECONDS, backoff.firstSeconds, env),
      maxSeconds: positiveInteger(FUNCTION_ENV.OVERLOAD_BACKOFF_MAX_SECONDS, backoff.maxSeconds, env),
      shortestFirstSeconds: positiveInteger(
        FUNCTION_ENV.OVERLOAD_BACKOFF_SHORTEST_FIRST_SECONDS,
        backoff.shortestFirstSeconds,
        env,
      ),
    },
  };
}

/** Settings of the review functions: claim length, change window, queue page size. */
export function reviewSettings(env: NodeJS.ProcessEnv = process.env) {
  return {
    timings: {
      claimMs: positiveInteger(FUNCTION_ENV.REVIEW_CLAIM_MS, REVIEW.claimMs, env),
      changeWindowMs: positiveInteger(FUNCTION_ENV.REVIEW_CHANGE_WINDOW_MS, REVIEW.changeWindowMs, env),
    },
    pageSize: positiveInteger(FUNCTION_ENV.REVIEW_PAGE_SIZE, REVIEW.pageSize, env),
  };
}

/** Reads a positive integer, or `fallback` when unset; anything else throws naming the variable. */
export function positiveInteger(
  name: string,
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`environment variable ${name} must be a positive integer, got "${raw}"`);
  return value;
}

/**
 * Reads a positive number (fractions allowed), or `fallback` when unset; unset without a fallback,
 * or anything but a positive number, throws naming the variable.
 */
export function positiveNumber(
  name: string,
  fallback: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") {
    if (fallback === undefined) throw new Error(`environment variable ${name} is required`);
    return fallback;
  }
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`environment variable ${name} must be a positive number, got "${raw}"`);
  return value;
}
