/**
 * The async lane's simulation: a batch of N items on the async endpoint the template describes,
 * from an idle endpoint at its minimum (zero) to the last result and back to the minimum.
 *
 * The submit function turns the items into objects of `itemsPerObject` (the last one partial,
 * after the event source's batching window); SageMaker queues them and runs one object at a time
 * per instance (`concurrentPerInstance`): the first item of an object pays a fresh prefill, the
 * rest reuse the policy's preamble. Every minute the model reads the two metrics scaling reads:
 * `HasBacklogWithoutCapacity` (objects queued or running, no instance in service), whose alarm
 * drives the wake-up step policy, and `ApproximateBacklogSizePerInstance`, tracked at its target
 * (scale out after `scaleOutDatapoints` above it, in after `scaleInDatapoints` below 90% of it, to
 * zero once nothing is left, each with its cooldown). A new instance serves after
 * `instanceStartSeconds`; instances are billed from their start to their removal. Each finished
 * object is settled by the result function: a notification, then its items decided a few at a
 * time on the decide path.
 */
import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import type { AsyncShape } from "./async-template.ts";
import { AWS_BEHAVIOUR } from "./aws-behaviour.ts";

/** The lane's own timings outside the model: assumptions, small next to an object's minutes. */
export const ASYNC_OVERHEAD = {
  /** A submit invocation: two S3 writes and one InvokeEndpointAsync. */
  submitSeconds: 2,
  /** From an object's end to the result function's start: S3 upload, SNS, SQS, the poller. */
  notificationSeconds: 2,
  /** One item on the decide path in the result function (a table read, writes, an event). */
  resultSecondsPerItem: 0.05,
} as const;

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
}

/** One minute of the run. */
export interface AsyncMinute {
  readonly minute: number;
  /** Objects in SageMaker's queue (submitted, not yet running). */
  readonly queued: number;
  readonly running: number;
  readonly inService: number;
  readonly starting: number;
  readonly settled: number;
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
  /** Longest an object waited in SageMaker's queue. */
  readonly longestWaitSeconds: number;
  /** Objects that waited past the request TTL (SageMaker fails them; the lane tries them again). */
  readonly expired: number;
  /** Lambda GB-seconds and invocations of the submit and result functions. */
  readonly lambdaGbSeconds: number;
  readonly lambdaRuns: number;
  readonly minutes: AsyncMinute[];
}

interface Instance {
  readonly startedAt: number;
  readonly readyAt: number;
  busyUntil: number;
  removedAt?: number;
}

/** The objects a batch becomes: their sizes, and when each reaches SageMaker's queue. */
function objectsOf(run: AsyncRun): { sizes: number[]; arrivals: number[] } {
  const { shape, items } = run;
  if (!(Number.isInteger(items) && items > 0))
    throw new RangeError(`items must be a positive integer, got ${items}`);
  const k = shape.itemsPerObject;
  const sizes = Array.from({ length: Math.ceil(items / k) }, (_, i) => Math.min(k, items - i * k));
  // Full objects go as soon as a submit invocation is free; the partial last one after the window.
  const arrivals = sizes.map((size, i) =>
    size === k
      ? (Math.floor(i / shape.submitConcurrency) + 1) * ASYNC_OVERHEAD.submitSeconds
      : shape.batchingWindowSeconds + ASYNC_OVERHEAD.submitSeconds,
  );
  return { sizes, arrivals };
}

/** The Lambda use of the two functions for these objects. */
function lambdaUse(sizes: readonly number[], settleOf: (size: number) => number) {
  return {
    lambdaRuns: 2 * sizes.length,
    lambdaGbSeconds:
      sizes.length * ASYNC_OVERHEAD.submitSeconds * (ASYNC_LANE.submit.memoryMiB / 1024) +
      sizes.reduce((sum, size) => sum + ASYNC_OVERHEAD.notificationSeconds + settleOf(size), 0) *
        (ASYNC_LANE.results.memoryMiB / 1024),
  };
}

/** Simulates the batch; see the module comment. */
export function simulateAsyncBatch(run: AsyncRun): AsyncResult {
  const { sizes, arrivals } = objectsOf(run);
  const serviceOf = (size: number) =>
    run.secondsPerItem.fresh + (size - 1) * run.secondsPerItem.preambleCached;
  const settleOf = (size: number) =>
    Math.ceil(size / (run.resultConcurrency ?? ASYNC_LANE.results.itemConcurrency)) *
    ASYNC_OVERHEAD.resultSecondsPerItem;
  const state = new ScalingState(run.shape);
  const queue: number[] = [];
  const running: { size: number; endsAt: number }[] = [];
  const seen = { next: 0, first: Number.POSITIVE_INFINITY, last: 0, settled: 0, longestWait: 0, expired: 0 };
  const minutes: AsyncMinute[] = [];
  for (let now = 0; !(seen.settled === sizes.length && state.atMinimum()); now++) {
    if (now > MAX_SIMULATED_SECONDS)
      throw new RangeError(
        `the batch did not finish within ${MAX_SIMULATED_SECONDS / 86_400} simulated days`,
      );
    while (seen.next < sizes.length && arrivals[seen.next]! <= now) queue.push(seen.next++);
    while (queue.length > 0 && now - arrivals[queue[0]!]! > ASYNC_LANE.requestTtlSeconds) {
      queue.shift();
      seen.expired++;
      seen.settled++;
    }
    for (let i = running.length - 1; i >= 0; i--) {
      const job = running[i]!;
      if (job.endsAt > now) continue;
      running.splice(i, 1);
      const notified = job.endsAt + ASYNC_OVERHEAD.notificationSeconds;
      seen.first = Math.min(seen.first, notified + ASYNC_OVERHEAD.resultSecondsPerItem);
      seen.last = Math.max(seen.last, notified + settleOf(job.size));
      seen.settled++;
    }
    for (const instance of state.inService(now)) {
      if (instance.busyUntil > now || queue.length === 0) continue;
      const object = queue.shift()!;
      seen.longestWait = Math.max(seen.longestWait, now - arrivals[object]!);
      instance.busyUntil = now + serviceOf(sizes[object]!);
      running.push({ size: sizes[object]!, endsAt: instance.busyUntil });
    }
    if (now % AWS_BEHAVIOUR.scaling.standardPeriodSeconds !== 0) continue;
    // SageMaker's metrics count the objects it holds: queued or running, not those still being submitted.
    state.evaluate(now, queue.length + running.length);
    minutes.push({
      minute: now / 60,
      queued: queue.length,
      running: running.length,
      inService: state.inService(now).length,
      starting: state.starting(now),
      settled: seen.settled,
    });
  }
  const end = minutes.length > 0 ? Math.max(seen.last, (minutes.at(-1)?.minute ?? 0) * 60) : seen.last;
  return {
    objects: sizes.length,
    itemsPerObject: run.shape.itemsPerObject,
    firstResultSeconds: seen.first,
    lastResultSeconds: seen.last,
    instanceSeconds: state.billedSeconds(end),
    idleAgainSeconds: end,
    peakInstances: state.peak,
    longestWaitSeconds: seen.longestWait,
    expired: seen.expired,
    ...lambdaUse(sizes, settleOf),
    minutes,
  };
}

/** The instances and the two scaling policies, evaluated on one-minute datapoints. */
class ScalingState {
  private readonly instances: Instance[] = [];
  private desired: number;
  private above = 0;
  private below = 0;
  private withoutCapacity = 0;
  private lastOut = Number.NEGATIVE_INFINITY;
  private lastIn = Number.NEGATIVE_INFINITY;
  private lastWake = Number.NEGATIVE_INFINITY;
  peak = 0;

  constructor(private readonly shape: AsyncShape) {
    this.desired = shape.minInstances;
    for (let i = 0; i < shape.minInstances; i++)
      this.instances.push({ startedAt: 0, readyAt: 0, busyUntil: 0 });
  }

  private live(): Instance[] {
    return this.instances.filter((i) => i.removedAt === undefined);
  }

  inService(now: number): Instance[] {
    return this.live().filter((i) => i.readyAt <= now);
  }

  starting(now: number): number {
    return this.live().length - this.inService(now).length;
  }

  atMinimum(): boolean {
    return this.live().length === this.shape.minInstances && this.desired === this.shape.minInstances;
  }

  billedSeconds(now: number): number {
    return this.instances.reduce((sum, i) => sum + ((i.removedAt ?? now) - i.startedAt), 0);
  }

  /** One datapoint of each metric, the policies' answers, and the instance count they ask for. */
  evaluate(now: number, backlog: number): void {
    const s = this.shape;
    const inService = this.inService(now).length;
    const perInstance = inService > 0 ? backlog / inService : backlog;
    this.withoutCapacity = backlog > 0 && inService === 0 ? this.withoutCapacity + 1 : 0;
    // The wake-up alarm's action repeats every minute while in ALARM, subject to its cooldown.
    if (
      s.wakeUp &&
      this.withoutCapacity >= s.wakeUp.evaluationPeriods &&
      now >= this.lastWake + s.wakeUp.cooldownSeconds
    ) {
      this.desired = Math.min(s.maxInstances, this.desired + s.wakeUp.step);
      this.lastWake = now;
    }
    const scaling = AWS_BEHAVIOUR.scaling;
    this.above = perInstance > s.backlogTarget ? this.above + 1 : 0;
    this.below = perInstance < s.backlogTarget * scaling.scaleInFraction ? this.below + 1 : 0;
    const wanted = Math.min(s.maxInstances, Math.max(s.minInstances, Math.ceil(backlog / s.backlogTarget)));
    if (
      this.above >= scaling.scaleOutDatapoints &&
      wanted > this.desired &&
      now >= this.lastOut + s.scaleOutCooldownSeconds
    ) {
      this.desired = wanted;
      this.lastOut = now;
    } else if (
      this.below >= scaling.scaleInDatapoints &&
      wanted < this.desired &&
      now >= this.lastIn + s.scaleInCooldownSeconds
    ) {
      this.desired = wanted;
      this.lastIn = now;
    }
    this.apply(now);
  }

  /** Starts or removes instances to match the desired count (idle ones first; busy ones when done). */
  private apply(now: number): void {
    const live = this.live();
    for (let i = live.length; i < this.desired; i++)
      this.instances.push({
        startedAt: now,
        readyAt: now + AWS_BEHAVIOUR.sageMaker.instanceStartSeconds,
        busyUntil: 0,
      });
    const surplus = live.length - this.desired;
    if (surplus > 0) {
      const idleFirst = [...live].sort((a, b) => a.busyUntil - b.busyUntil);
      for (const instance of idleFirst.slice(0, surplus))
        instance.removedAt = Math.max(now, instance.busyUntil);
    }
    this.peak = Math.max(this.peak, this.live().length);
  }
}
