/**
 * The decide function's SQS event source mapping in the simulation: batches of up to
 * `batchSize` messages (waiting up to the batching window for a full one), as many at once as
 * its concurrency allows. That concurrency starts at five and grows by about 300 a minute while
 * messages wait, up to the mapping's MaximumConcurrency, the function's reserved concurrency and
 * the account's limit; it shrinks back once the queue has stayed empty for a minute.
 */
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import type { FunctionShape, LaneShape } from "../shape.ts";
import type { EventHeap } from "./event-heap.ts";
import type { SimQueue } from "./sqs-sim.ts";

const lambda = AWS_BEHAVIOUR.lambda;
const STEP_SECONDS = 60 / lambda.scaleUpPerMinute;

/** The concurrency ceiling of a mapping: its own maximum, the function's reservation, the account. */
export function mappingCeiling(lane: LaneShape, decide: FunctionShape): number {
  return Math.min(
    lane.maxConcurrency ?? lambda.mappingCeiling,
    decide.reservedConcurrency ?? lambda.accountConcurrency,
    lambda.accountConcurrency,
  );
}

/** The mapping: call `dispatch` whenever messages may have become visible or a run ended. */
export class SimMapping {
  /** Runs of the function in progress. */
  active = 0;
  /** Most runs at once so far. */
  peak = 0;
  private allowed: number;
  private ceiling: number;
  private growthClock: number | undefined;
  private idleSince: number | undefined;
  private collectingSince: number | undefined;
  private wakeAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly lane: LaneShape,
    private readonly decide: FunctionShape,
    private readonly queue: SimQueue,
    private readonly heap: EventHeap,
    private readonly start: (ids: number[], now: number) => void,
  ) {
    this.ceiling = mappingCeiling(lane, decide);
    this.allowed = Math.min(lambda.initialConcurrency, this.ceiling);
  }

  /**
   * The mapping's MaximumConcurrency changed (UpdateEventSourceMapping): runs in progress finish,
   * no new one starts above the new ceiling; below it, the concurrency grows as usual.
   */
  setMaximumConcurrency(maximum: number, now: number): void {
    this.ceiling = mappingCeiling({ ...this.lane, maxConcurrency: maximum }, this.decide);
    this.allowed = Math.min(this.allowed, this.ceiling);
    this.dispatch(now);
  }

  /** A run ended: its concurrency is free again. */
  ended(now: number): void {
    this.active--;
    this.dispatch(now);
  }

  /** Starts every batch that may start at `now`, and sets a wake-up for the next that may. */
  dispatch(now: number): void {
    const { batchSize, batchingWindowSeconds: window } = this.lane;
    for (;;) {
      const visible = this.queue.visible(now);
      this.scale(now, visible);
      if (this.active >= this.allowed) {
        // Every run busy: come back when the concurrency may grow (once messages wait).
        if (this.allowed < this.ceiling)
          this.wake(visible > 0 ? this.growthClock! + STEP_SECONDS : this.queue.futureArrival(1));
        return;
      }
      if (visible === 0) {
        this.collectingSince = undefined;
        this.wake(this.queue.futureArrival(1));
        return;
      }
      if (visible < batchSize && window > 0) {
        this.collectingSince ??= now;
        const due = this.collectingSince + window;
        if (now < due) {
          this.wake(Math.min(due, this.queue.futureArrival(batchSize - visible)));
          return;
        }
      }
      this.collectingSince = undefined;
      const ids = this.queue.receive(batchSize, now);
      this.active++;
      this.peak = Math.max(this.peak, this.active);
      this.start(ids, now);
    }
  }

  /** Grows the concurrency while messages wait; shrinks it after a minute with none. */
  private scale(now: number, visible: number): void {
    if (visible > 0 && this.allowed < this.ceiling) {
      this.growthClock ??= now;
      const steps = Math.floor((now - this.growthClock) / STEP_SECONDS + 1e-9);
      if (steps > 0) {
        this.allowed = Math.min(this.ceiling, this.allowed + steps);
        this.growthClock += steps * STEP_SECONDS;
      }
    } else this.growthClock = undefined;
    if (visible > 0) this.idleSince = undefined;
    else if (this.idleSince === undefined) this.idleSince = now;
    else if (now - this.idleSince >= lambda.scaleDownAfterSeconds) {
      this.allowed = Math.max(Math.min(lambda.initialConcurrency, this.ceiling), this.active);
    }
  }

  private wake(at: number): void {
    if (!Number.isFinite(at) || at >= this.wakeAt) return;
    this.wakeAt = at;
    this.heap.at(at, this.woken);
  }

  private readonly woken = (now: number) => {
    if (this.wakeAt <= now) this.wakeAt = Number.POSITIVE_INFINITY;
    this.dispatch(now);
  };
}
