/**
 * The intake queue in the simulation: every item's arrival, receive count and end (decided or
 * dead-lettered). Visible messages are the arrivals not yet received plus the messages whose
 * visibility ran out. A standard queue orders on a best-effort basis; the model serves the
 * oldest-sent visible message first, so a message back from its visibility timeout is received
 * again soon even behind a backlog. A message that comes back after its last counted receive goes
 * to the dead-letter queue instead, as does one the decide function has seen fail too often.
 */
import { MinHeap } from "./min-heap.ts";

/** An item's state. */
const STATE = { queued: 0, decided: 1, dead: 2 } as const;

/** The queue and its items. */
export class SimQueue {
  readonly receives: Uint16Array;
  /** The item's own failures (not overload), when the function counts them. */
  readonly failures: Uint8Array;
  private readonly state: Uint8Array;
  /** Arrivals received so far (the next never-received arrival's index). */
  private taken = 0;
  /** Arrivals that have happened by the last `advance`. */
  private arrived = 0;
  /** Messages visible again, oldest-sent first (all sent before any arrival not yet received). */
  private readonly returned: MinHeap;
  private oldest = 0;
  decided = 0;
  deadLettered = 0;
  readonly latencies: Float64Array;

  constructor(
    readonly arrivals: Float64Array,
    /** SQS's limit: every receive counts. */
    readonly maxReceiveCount: number | undefined,
    /** The decide function's own limit on item failures (it dead-letters the item itself). */
    readonly maxItemFailures: number | undefined,
  ) {
    this.receives = new Uint16Array(arrivals.length);
    this.failures = new Uint8Array(arrivals.length);
    this.state = new Uint8Array(arrivals.length);
    this.latencies = new Float64Array(arrivals.length);
    this.returned = new MinHeap((id) => arrivals[id]!);
  }

  /** Items arrived by `now` (call with a clock that never goes back). */
  advance(now: number): number {
    while (this.arrived < this.arrivals.length && this.arrivals[this.arrived]! <= now) this.arrived++;
    return this.arrived;
  }

  /** Visible messages at `now`. */
  visible(now: number): number {
    return this.advance(now) - this.taken + this.returned.size;
  }

  /** The time of the `k`-th arrival still to come (k ≥ 1), or Infinity. */
  futureArrival(k: number): number {
    return this.arrivals[this.arrived + k - 1] ?? Number.POSITIVE_INFINITY;
  }

  /** Receives up to `n` visible messages at `now`, oldest-sent first; counts the receive. */
  receive(n: number, now: number): number[] {
    this.advance(now);
    const out: number[] = [];
    while (out.length < n) {
      const id = this.returned.size > 0 ? this.returned.pop() : this.taken < this.arrived ? this.taken++ : -1;
      if (id < 0) break;
      this.receives[id]!++;
      out.push(id);
    }
    return out;
  }

  /** The item was decided at `now`. */
  decide(id: number, now: number): void {
    if (this.state[id] !== STATE.queued) return;
    this.state[id] = STATE.decided;
    this.latencies[this.decided++] = now - this.arrivals[id]!;
  }

  /**
   * The message becomes visible again (its visibility ran out or was changed); past its last
   * receive (SQS) or its last allowed failure (the function) it is dead-lettered instead.
   * Returns whether it was.
   */
  reappear(id: number): boolean {
    if (this.state[id] !== STATE.queued) return false;
    const sqsLimit = this.maxReceiveCount !== undefined && this.receives[id]! >= this.maxReceiveCount;
    const ownLimit = this.maxItemFailures !== undefined && this.failures[id]! >= this.maxItemFailures;
    if (sqsLimit || ownLimit) {
      this.state[id] = STATE.dead;
      this.deadLettered++;
      return true;
    }
    this.returned.push(id);
    return false;
  }

  /** Items arrived and neither decided nor dead-lettered at `now` (visible or in flight). */
  waiting(now: number): number {
    return this.advance(now) - this.decided - this.deadLettered;
  }

  /** Seconds since the oldest message still in the queue (visible or in flight) was sent. */
  oldestAge(now: number): number {
    this.advance(now);
    while (this.oldest < this.arrived && this.state[this.oldest] !== STATE.queued) this.oldest++;
    return this.oldest < this.arrived ? now - this.arrivals[this.oldest]! : 0;
  }
}
