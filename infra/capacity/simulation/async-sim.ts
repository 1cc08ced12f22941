/**
 * The async lane's simulation: a batch of N items on the async endpoint the template describes,
 * from an idle endpoint at its minimum (zero) to the last object settled and back to the minimum.
 *
 * The submit function turns the items into objects of `itemsPerObject` (the last one partial,
 * after the event source's batching window) and holds them back as the product's submit step
 * does: it hands SageMaker another object only while the open items (handed over, not yet
 * settled) times the hold-back's seconds per item, over the maximum instance count, stay within
 * the request TTL divided by the margin, so no object waits in SageMaker's queue past its TTL at
 * the maximum; it submits the rest as the backlog drains. SageMaker queues the objects and runs
 * one at a time per instance: the first item of an object pays a fresh prefill, the rest reuse the
 * policy's preamble. An object still queued past the request TTL expires: SageMaker fails it, and
 * the result function invokes it again, as `shared/use-cases/async/async-results.ts` does, until
 * `objectAttempts` tries; then its items are dead-lettered. An expired object is a failure, never
 * a settled one. Scaling is `async-scaling-sim.ts`; each answered object is settled by the result
 * function (a notification, then its items decided a few at a time on the decide path).
 */
import { ASYNC_LANE } from "../../../shared/domain/topology.ts";
import type { AsyncShape } from "../async-template.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import { AsyncScalingState } from "./async-scaling-sim.ts";
import { ASYNC_OVERHEAD, admitsObject, type HoldBack, objectsOf } from "./async-submit-sim.ts";

/** The longest run simulated: a month. */
const MAX_SIMULATED_SECONDS = 30 * 86_400;

/** What the simulation takes. */
export interface AsyncRun {
  readonly shape: AsyncShape;
  readonly items: number;
  /** Seconds of a fresh item, and of one under its object's cached preamble, on this instance type. */
  readonly secondsPerItem: { readonly fresh: number; readonly preambleCached: number };
  /** Items the result function decides at once. @default ASYNC_LANE.results.itemConcurrency */
  readonly resultConcurrency?: number;
  /** The submit step's hold-back; `false`: every object handed over at once. @default PRODUCT_HOLD_BACK (`async-submit-sim.ts`) */
  readonly holdBack?: HoldBack | false;
  /** Tries of an object before its items are dead-lettered. @default ASYNC_LANE.objectAttempts */
  readonly objectAttempts?: number;
  /** From a scale-out decision until a new instance serves. @default AWS_BEHAVIOUR.sageMaker.instanceStartSeconds */
  readonly instanceStartSeconds?: number;
}

/** One minute of the run. */
export interface AsyncMinute {
  readonly minute: number;
  /** Objects the submit step holds back (made, not yet handed to SageMaker). */
  readonly held: number;
  /** Objects in SageMaker's queue (submitted, not yet running). */
  readonly queued: number;
  readonly running: number;
  readonly inService: number;
  readonly starting: number;
  /** Objects answered and settled. */
  readonly settled: number;
  /** Objects whose items were dead-lettered after their last try. */
  readonly deadLettered: number;
}

/** What the run found. */
export interface AsyncResult {
  readonly objects: number;
  readonly itemsPerObject: number;
  /** Seconds from the batch's submission to its first and its last decided item. */
  readonly firstResultSeconds: number;
  readonly lastResultSeconds: number;
  /** Billed instance time, from each instance's start to its removal (the scale-in tail included). */
  readonly instanceSeconds: number;
  /** Seconds until the endpoint was back at its minimum. */
  readonly idleAgainSeconds: number;
  readonly peakInstances: number;
  /** Longest an object waited in SageMaker's queue, and longest the submit step held one back. */
  readonly longestWaitSeconds: number;
  readonly longestHeldSeconds: number;
  /** Invocations that waited past the request TTL: each a failed attempt, never a settled object. */
  readonly expired: number;
  /** Invocations made again after a failed attempt. */
  readonly retried: number;
  /** Objects answered (and their items), and objects dead-lettered after their last try (and their items). */
  readonly answeredObjects: number;
  readonly answeredItems: number;
  readonly deadLetteredObjects: number;
  readonly deadLetteredItems: number;
  /** Lambda GB-seconds and invocations of the submit and result functions. */
  readonly lambdaGbSeconds: number;
  readonly lambdaRuns: number;
  readonly minutes: AsyncMinute[];
}

/** Simulates the batch; see the module comment. */
export function simulateAsyncBatch(run: AsyncRun): AsyncResult {
  const lane = new AsyncLaneRun(run);
  let now = 0;
  for (; !lane.done(); now++) {
    if (now > MAX_SIMULATED_SECONDS)
      throw new RangeError(
        `the batch did not finish within ${MAX_SIMULATED_SECONDS / 86_400} simulated days`,
      );
    lane.second(now);
  }
  return lane.result(now);
}

/** An object handed to SageMaker: which, and when its current invocation was made. */
interface Invocation {
  readonly object: number;
  readonly invokedAt: number;
}

/** The objects' life through one run, second by second. */
class AsyncLaneRun {
  private readonly sizes: number[];
  private readonly arrivals: number[];
  private readonly attempts: number[];
  private readonly scaling: AsyncScalingState;
  private readonly held: number[] = [];
  private readonly queue: Invocation[] = [];
  private readonly running: { object: number; endsAt: number }[] = [];
  private readonly again: { object: number; at: number }[] = [];
  private readonly minutes: AsyncMinute[] = [];
  private openItems = 0;
  private next = 0;
  private readonly seen = {
    first: Number.POSITIVE_INFINITY,
    last: 0,
    longestWait: 0,
    longestHeld: 0,
    expired: 0,
    retried: 0,
    answered: 0,
    answeredItems: 0,
    deadLettered: 0,
    deadLetteredItems: 0,
    failedNotices: 0,
  };

  constructor(private readonly run: AsyncRun) {
    ({ sizes: this.sizes, arrivals: this.arrivals } = objectsOf(run.shape, run.items));
    this.attempts = this.sizes.map(() => 0);
    this.scaling = new AsyncScalingState(run.shape, run.instanceStartSeconds);
  }

  done(): boolean {
    return this.seen.answered + this.seen.deadLettered === this.sizes.length && this.scaling.atMinimum();
  }

  /** One second: objects made, handed over, expired, tried again, finished and started; each minute, scaling. */
  second(now: number): void {
    while (this.next < this.sizes.length && this.arrivals[this.next]! <= now) this.held.push(this.next++);
    this.release(now);
    this.expire(now);
    this.finish(now);
    for (const instance of this.scaling.inService(now)) {
      if (instance.busyUntil > now || this.queue.length === 0) continue;
      const { object, invokedAt } = this.queue.shift()!;
      this.seen.longestWait = Math.max(this.seen.longestWait, now - invokedAt);
      instance.busyUntil = now + this.serviceOf(this.sizes[object]!);
      this.running.push({ object, endsAt: instance.busyUntil });
    }
    if (now % AWS_BEHAVIOUR.scaling.standardPeriodSeconds !== 0) return;
    // SageMaker's metrics count the objects it holds: queued or running, not those held back.
    this.scaling.evaluate(now, this.queue.length + this.running.length);
    this.minutes.push({
      minute: now / 60,
      held: this.held.length,
      queued: this.queue.length,
      running: this.running.length,
      inService: this.scaling.inService(now).length,
      starting: this.scaling.starting(now),
      settled: this.seen.answered,
      deadLettered: this.seen.deadLettered,
    });
  }

  /** Objects failed earlier go again (the result function invokes them); held ones go while the hold-back admits them. */
  private release(now: number): void {
    for (let i = this.again.length - 1; i >= 0; i--) {
      if (this.again[i]!.at > now) continue;
      const { object } = this.again.splice(i, 1)[0]!;
      this.invoke(object, now);
      this.seen.retried++;
    }
    while (this.held.length > 0 && this.admits(this.sizes[this.held[0]!]!)) {
      const object = this.held.shift()!;
      this.seen.longestHeld = Math.max(this.seen.longestHeld, now - this.arrivals[object]!);
      this.openItems += this.sizes[object]!;
      this.invoke(object, now);
    }
  }

  /** Whether the submit step hands over an object of `size` items now (one always goes when none is open). */
  private admits(size: number): boolean {
    return admitsObject(this.openItems, size, this.run.holdBack, this.run.shape.maxInstances);
  }

  private invoke(object: number, now: number): void {
    this.attempts[object]!++;
    this.queue.push({ object, invokedAt: now });
  }

  /** Queued invocations past the TTL fail: the object is invoked again after its notification, or dead-lettered after its last try. */
  private expire(now: number): void {
    while (this.queue.length > 0 && now - this.queue[0]!.invokedAt > ASYNC_LANE.requestTtlSeconds) {
      const { object } = this.queue.shift()!;
      this.seen.expired++;
      this.seen.failedNotices++;
      if (this.attempts[object]! < (this.run.objectAttempts ?? ASYNC_LANE.objectAttempts)) {
        this.again.push({
          object,
          at: now + ASYNC_OVERHEAD.notificationSeconds + ASYNC_OVERHEAD.submitSeconds,
        });
        continue;
      }
      this.seen.deadLettered++;
      this.seen.deadLetteredItems += this.sizes[object]!;
      this.openItems -= this.sizes[object]!;
    }
  }

  /** Objects whose run ended are answered, and settled by the result function. */
  private finish(now: number): void {
    for (let i = this.running.length - 1; i >= 0; i--) {
      const job = this.running[i]!;
      if (job.endsAt > now) continue;
      this.running.splice(i, 1);
      const size = this.sizes[job.object]!;
      const notified = job.endsAt + ASYNC_OVERHEAD.notificationSeconds;
      this.seen.first = Math.min(this.seen.first, notified + ASYNC_OVERHEAD.resultSecondsPerItem);
      this.seen.last = Math.max(this.seen.last, notified + this.settleOf(size));
      this.seen.answered++;
      this.seen.answeredItems += size;
      this.openItems -= size;
    }
  }

  private serviceOf(size: number): number {
    return this.run.secondsPerItem.fresh + (size - 1) * this.run.secondsPerItem.preambleCached;
  }

  private settleOf(size: number): number {
    const concurrency = this.run.resultConcurrency ?? ASYNC_LANE.results.itemConcurrency;
    return Math.ceil(size / concurrency) * ASYNC_OVERHEAD.resultSecondsPerItem;
  }

  /** What the run came to, at `now`, the second it ended. */
  result(now: number): AsyncResult {
    const { seen, minutes, sizes } = this;
    const end = Math.max(seen.last, (minutes.at(-1)?.minute ?? 0) * 60, seen.deadLettered > 0 ? now : 0);
    const notices = seen.answered + seen.failedNotices;
    return {
      objects: sizes.length,
      itemsPerObject: this.run.shape.itemsPerObject,
      firstResultSeconds: seen.first,
      lastResultSeconds: seen.last,
      instanceSeconds: this.scaling.billedSeconds(end),
      idleAgainSeconds: end,
      peakInstances: this.scaling.peak,
      longestWaitSeconds: seen.longestWait,
      longestHeldSeconds: seen.longestHeld,
      expired: seen.expired,
      retried: seen.retried,
      answeredObjects: seen.answered,
      answeredItems: seen.answeredItems,
      deadLetteredObjects: seen.deadLettered,
      deadLetteredItems: seen.deadLetteredItems,
      // One submit run per object; one result run per notification (answered or failed).
      lambdaRuns: sizes.length + notices,
      lambdaGbSeconds:
        sizes.length * ASYNC_OVERHEAD.submitSeconds * (ASYNC_LANE.submit.memoryMiB / 1024) +
        (notices * ASYNC_OVERHEAD.notificationSeconds +
          sizes.reduce((sum, size) => sum + this.settleOf(size), 0)) *
          (ASYNC_LANE.results.memoryMiB / 1024),
      minutes,
    };
  }
}
