/**
 * Time budgets for suites that run real services on a shared machine: derived from latency
 * measured at start-up (under whatever load the machine has then) and from the topology's own
 * retry numbers, never from constants tuned on an idle machine; and waits that fail on lack of
 * progress, printing where things stood, rather than on a wall-clock deadline.
 */

import { backoffCeilingMs } from "../../shared/domain/backoff/backoff.ts";
import { DECIDE_FUNCTION } from "../../shared/domain/topology.ts";

/** Budgets of a pipeline test. */
export interface Budgets {
  /** The measured single-request latency (p95 of the probes). */
  readonly latencyMs: number;
  readonly endpointTimeoutMs: number;
  readonly endpointAttempts: number;
  /** Past the endpoint timeout, for injected hangs. */
  readonly hangMs: number;
  readonly visibilityTimeoutSeconds: number;
  readonly publishLeaseMs: number;
  /** How long a queue may go without shrinking before the wait fails. */
  readonly stallSeconds: number;
}

/**
 * Sends `body` to `url` `count` times, one at a time, after two warm-up calls, and returns the
 * p95 latency in ms.
 */
export async function measureLatency(url: string, body: unknown, count: number): Promise<number> {
  const times: number[] = [];
  for (let i = -2; i < count; i++) {
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`latency probe got ${response.status} from ${url}`);
    if (i >= 0) times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!;
}

/**
 * Budgets for a pipeline whose endpoint serves one request at a time while up to
 * `concurrentRequests` wait: a call may queue behind all of them, so its timeout covers that
 * queue three times over; the visibility timeout covers every try of a batch plus backoff, as AWS
 * advises, and the publish lease stays below it.
 */
export function budgetsFor(latencyMs: number, options: { concurrentRequests: number }): Budgets {
  const endpointAttempts = DECIDE_FUNCTION.endpointAttempts;
  const endpointTimeoutMs = Math.max(1000, Math.ceil(3 * options.concurrentRequests * latencyMs));
  const batchWorstMs = endpointAttempts * endpointTimeoutMs + backoffCeilingMs(endpointAttempts, 100) + 2000;
  const visibilityTimeoutSeconds = Math.ceil((1.5 * batchWorstMs) / 1000);
  return {
    latencyMs,
    endpointTimeoutMs,
    endpointAttempts,
    hangMs: endpointTimeoutMs + 250,
    visibilityTimeoutSeconds,
    publishLeaseMs: Math.floor((visibilityTimeoutSeconds * 1000) / 2),
    // A message may be invisible for a whole visibility timeout before its retry, three times.
    stallSeconds: Math.max(60, 4 * visibilityTimeoutSeconds),
  };
}

/**
 * Waits until `size()` is 0, failing only when it has not shrunk for `budgets.stallSeconds`;
 * the error says what was left and `describe()`'s account of where things stood.
 */
export async function waitForProgress(
  what: string,
  size: () => Promise<number>,
  budgets: Pick<Budgets, "stallSeconds">,
  describe: () => string,
): Promise<void> {
  let last = Number.POSITIVE_INFINITY;
  let lastChange = Date.now();
  for (;;) {
    const now = await size();
    if (now === 0) return;
    if (now < last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > budgets.stallSeconds * 1000) {
      throw new Error(
        `${what} made no progress for ${budgets.stallSeconds} s with ${now} messages left; ${describe()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Waits until `done()` holds, failing only when `progress()` (a figure that moves while the work
 * goes on: output written, records made, requests answered) has not changed for
 * `budgets.stallSeconds`; the error says `describe()`'s account of where things stood.
 */
export async function waitWhileProgressing(
  what: string,
  done: () => Promise<boolean>,
  progress: () => Promise<number | string> | number | string,
  budgets: Pick<Budgets, "stallSeconds">,
  describe: () => string,
): Promise<void> {
  let last = await progress();
  let lastChange = Date.now();
  while (!(await done())) {
    const now = await progress();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > budgets.stallSeconds * 1000) {
      throw new Error(
        `${what} made no progress for ${budgets.stallSeconds} s (at ${String(now)}); ${describe()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * The vitest time limit of a test whose every wait fails on lack of progress (its own stall
 * limits): long enough never to be what ends it on a loaded machine, so that only a hang outside
 * those waits meets it.
 */
export const PROGRESS_BOUND_TEST_MS = 3_600_000;

/**
 * Waits until `check()` gives a value, failing only when `progress()` (anything that moves while
 * the work goes on) has not changed for `stallSeconds`.
 */
export async function untilValue<T>(
  what: string,
  check: () => Promise<T | undefined>,
  progress: () => Promise<number | string> | number | string,
  stallSeconds = 120,
): Promise<T> {
  let value: T | undefined;
  await waitWhileProgressing(
    what,
    async () => {
      value = await check();
      return value !== undefined;
    },
    progress,
    { stallSeconds },
    () => "",
  );
  return value as T;
}
