/**
 * Waiting between retries: exponential backoff with full jitter (a random wait up to
 * `base · 2^(attempt − 2)` before attempt 2, 3, ...), so that many workers retrying at once spread out.
 */

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits before try number `attempt` (no wait before the first). */
export async function backoff(attempt: number, baseDelayMs: number): Promise<void> {
  if (attempt > 1) await sleep(Math.random() * baseDelayMs * 2 ** (attempt - 2));
}
