/**
 * Progress for the steps that can keep a command silent for seconds (loading its modules, a first
 * call to a service, a download): a step that has not finished after two seconds says what it is
 * doing on stderr, then again, with the time so far, at growing intervals, until it ends. A step
 * that ends sooner says nothing, so a fast command prints what it printed before. The commands
 * say it on a terminal only ({@link onTerminal}): a person waits there, while a pipe or a log
 * would gain lines that depend on how busy the machine was.
 */

/** How long a step may be silent before it says what it is doing. */
export const QUIET_MS = 2_000;

/** The timers a step uses (a test passes fake ones). */
export interface StepTimers {
  readonly setTimeout: (run: () => void, ms: number) => unknown;
  readonly clearTimeout: (timer: never) => void;
}

/**
 * Awaits `work`; if it is still running after `quietMs`, notes `what…`, then `what… (N s)` after
 * twice as long again each time, until it settles.
 */
export async function slowStep<T>(
  note: (line: string) => void,
  what: string,
  work: Promise<T>,
  quietMs = QUIET_MS,
  timers: StepTimers = { setTimeout, clearTimeout: (t) => clearTimeout(t) },
): Promise<T> {
  let timer: unknown;
  let waited = 0;
  const arm = (ms: number) => {
    timer = timers.setTimeout(() => {
      waited += ms;
      note(waited === quietMs ? `${what}…` : `${what}… (${Math.round(waited / 1000)} s)`);
      arm(ms * 2);
    }, ms);
    (timer as { unref?: () => void } | undefined)?.unref?.();
  };
  arm(quietMs);
  try {
    return await work;
  } finally {
    timers.clearTimeout(timer as never);
  }
}

/** `note` when `stream` is a terminal, else a note that writes nothing. */
export function onTerminal(
  stream: { readonly isTTY?: boolean },
  note: (line: string) => void,
): (line: string) => void {
  return stream.isTTY ? note : () => {};
}
