/**
 * Runs tasks one at a time on a resource that cannot be shared (the model's single context
 * sequence), with a bound on how many may wait: past it, callers are told to come back later
 * instead of piling up memory and latency.
 */
import { DecisionRuntimeError } from "./errors.ts";

/** Too many requests are already waiting. */
export class QueueFullError extends DecisionRuntimeError {
  override name = "QueueFullError";
  constructor(readonly limit: number) {
    super("queue_full", `the model is busy: ${limit} requests are already waiting`);
  }
}

/** The caller gave up (deadline or disconnect) before or while its task ran. */
export class TaskAbortedError extends DecisionRuntimeError {
  override name = "TaskAbortedError";
  constructor(reason: string, options?: ErrorOptions) {
    super("aborted", reason, options);
  }
}

/** Live requests go first; batch requests use the model when no live one waits. */
export type TaskPriority = "live" | "batch";

interface Waiter {
  readonly priority: TaskPriority;
  readonly start: () => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * A queue of exclusive tasks with a bounded number of waiters, first in first out within each
 * priority: a waiting live task always starts before a waiting batch task, so a large batch
 * sharing the model delays a live request by at most the task already running. A waiter whose signal aborts
 * (its client disconnected, or its deadline passed) leaves the queue at once: it stops counting
 * against the bound and is never started, so abandoned requests cannot lock others out.
 */
export class WorkQueue {
  private readonly waiters: Waiter[] = [];
  private running = false;

  /** @param maxWaiting tasks allowed to wait behind the running one. @default Infinity */
  constructor(readonly maxWaiting = Number.POSITIVE_INFINITY) {}

  /** Tasks waiting (not counting the running one). */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Whether a task is running. */
  get busy(): boolean {
    return this.running;
  }

  /**
   * Runs `task` once every earlier task has finished. Rejects at once with
   * {@link QueueFullError} when the queue is full, and with {@link TaskAbortedError} as soon as
   * `signal` aborts while waiting (the task then never starts).
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal, priority: TaskPriority = "live"): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    // An idle queue always admits; a busy one admits up to maxWaiting behind the running task.
    if (this.running && this.waiters.length >= this.maxWaiting) {
      return Promise.reject(new QueueFullError(this.maxWaiting));
    }
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        signal,
        start: () => {
          signal?.removeEventListener("abort", waiter.onAbort);
          this.running = true;
          task()
            .then(resolve, reject)
            .finally(() => {
              this.running = false;
              this.next();
            });
        },
        onAbort: () => {
          const index = this.waiters.indexOf(waiter);
          if (index < 0) return;
          this.waiters.splice(index, 1);
          reject(abortError(signal!));
          this.settled();
        },
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
      if (!this.running) this.next();
    });
  }

  /** Resolves when the queue is idle with nobody waiting. */
  async drain(): Promise<void> {
    while (this.running || this.waiters.length > 0) {
      await new Promise<void>((resolve) => this.idleListeners.push(resolve));
    }
  }

  private readonly idleListeners: (() => void)[] = [];

  private next(): void {
    const live = this.waiters.findIndex((w) => w.priority === "live");
    const waiter = this.waiters.splice(live >= 0 ? live : 0, 1)[0];
    if (waiter) waiter.start();
    else this.settled();
  }

  private settled(): void {
    if (this.running || this.waiters.length > 0) return;
    for (const listener of this.idleListeners.splice(0)) listener();
  }
}

function abortError(signal: AbortSignal): TaskAbortedError {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
  return new TaskAbortedError(`gave up waiting for the model: ${reason}`, { cause: signal.reason });
}
