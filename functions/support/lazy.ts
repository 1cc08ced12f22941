/**
 * One lazy start for a handler's dependencies: made on the first invocation and shared by the
 * later ones of the same execution environment, as Lambda reuses it. A start that fails is
 * forgotten, so the next invocation tries again: a cold start that met a passing fault (a
 * throttled call, a secret not readable yet) must not fail every later invocation of that
 * environment.
 */

/** A function that starts `start` once and returns the same promise until it rejects. */
export function lazy<T>(start: () => Promise<T>): () => Promise<T> {
  let started: Promise<T> | undefined;
  return () => {
    if (!started) {
      const attempt = start();
      started = attempt;
      // Forget a rejected start (only this one: a later start may already have replaced it).
      attempt.catch(() => {
        if (started === attempt) started = undefined;
      });
    }
    return started;
  };
}
