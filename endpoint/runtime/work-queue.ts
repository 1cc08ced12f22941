/**
 * Runs tasks one at a time on a resource that cannot be shared (the model's single context
 * sequence), with a bound on how many may wait: past it, callers are told to come back later
 * instead of piling up memory and latency.
 */
import { DecisionRuntimeError } from "../scorer/errors.ts";

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

/** A FIFO of exclusive tasks with a bounded number of waiters. */
export class WorkQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waitingCount = 0;
  private runningCount = 0;

  /** @param maxWaiting tasks allowed to wait behind the running one. @default Infinity */
  constructor(readonly maxWaiting = Number.POSITIVE_INFINITY) {}

  /** Tasks waiting (not counting the running one). */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Whether a task is running. */
  get busy(): boolean {
    return this.runningCount > 0;
  }

  /**
   * Runs `task` once every earlier task has finished. Rejects at once with
   * {@link QueueFullError} when the queue is full, and with {@link TaskAbortedError} when
   * `signal` aborts while waiting (the task then never starts).
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // An idle queue always admits; a busy one admits up to maxWaiting behind the running task.
    if (this.runningCount + this.waitingCount > this.maxWaiting) {
      return Promise.reject(new QueueFullError(this.maxWaiting));
    }
    if (signal?.aborted) return Promise.reject(abortError(signal));
    this.waitingCount++;
    const result = this.tail.then(async () => {
      this.waitingCount--;
      if (signal?.aborted) throw abortError(signal);
      this.runningCount++;
      try {
        return await task();
      } finally {
        this.runningCount--;
      }
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves when every task queued so far has settled. */
  async drain(): Promise<void> {
    await this.tail;
  }
}

function abortError(signal: AbortSignal): TaskAbortedError {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
  return new TaskAbortedError(`gave up waiting for the model: ${reason}`, { cause: signal.reason });
}
