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

/** The longest the waits before tries 2..`attempts` can add up to. */
export function backoffCeilingMs(attempts: number, baseDelayMs: number): number {
  let total = 0;
  for (let attempt = 2; attempt <= attempts; attempt++) total += baseDelayMs * 2 ** (attempt - 2);
  return total;
}
