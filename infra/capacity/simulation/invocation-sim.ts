/**
 * One run of the decide function on one SQS batch, as `BatchingDecisionEndpoint` calls the
 * endpoint: the batch in calls of up to `endpointBatchItems` items; items answered 503/504 are
 * sent again batched, up to `endpointAttempts` tries in all; a call that fails as a whole (a
 * throttle, the client's per-call timeout) sends its items one per call with the tries left
 * (attempts − 1 each). The function's own timeout ends the run and fails what is unsettled. A
 * client that treats overload as no failure gives up on an overloaded item at once instead.
 */
import { EndpointRequest, ITEM } from "../endpoint-request.ts";
import type { FunctionShape } from "../shape.ts";
import type { SimEndpoint } from "./endpoint-sim.ts";
import type { EventHeap } from "./event-heap.ts";

/** Why an item was not decided on this receive. */
export const FAILURE = { queueFull: 1, deadline: 2, throttled: 3, timeout: 4, functionTimeout: 5 } as const;

/** One of {@link FAILURE}'s values. */
export type FailureKind = (typeof FAILURE)[keyof typeof FAILURE];

/** Whether the endpoint was too busy (queue full, deadline passed while waiting, throttled). */
export function isOverload(kind: FailureKind): boolean {
  return kind === FAILURE.queueFull || kind === FAILURE.deadline || kind === FAILURE.throttled;
}

/** Counters the runs add to: item-level refusals by kind. */
export interface RefusalCounters {
  queueFull: number;
  deadline: number;
  throttled: number;
  timeout: number;
}

/** What a run needs, shared by all runs. */
export interface RunContext {
  readonly heap: EventHeap;
  readonly endpoint: SimEndpoint;
  readonly decide: FunctionShape;
  /** The function's own seconds before its first call (table reads). */
  readonly overheadSeconds: number;
  /** The client gives up on overload at once (no retry, no split): the item waits in its queue. */
  readonly overloadFailsAtOnce: boolean;
  readonly refusals: RefusalCounters;
  /** An item was decided. */
  readonly decided: (id: number, now: number) => void;
  /** The run ended; `failed` lists what goes back to the queue and why. */
  readonly ended: (run: DecideRun, now: number) => void;
}

/** One InvokeEndpoint call of a run: which of its items, and which try. */
class DecideCall extends EndpointRequest {
  abandoned = false;
  answeredYet = false;

  constructor(
    readonly run: DecideRun,
    readonly items: readonly number[],
    /** The batched try number, or 0 for a call of one item alone. */
    readonly attempt: number,
    /** The alone try number (alone calls). */
    readonly aloneTry: number,
  ) {
    super(items.length);
  }

  answered(now: number): void {
    if (this.abandoned || this.run.closed) return;
    this.answeredYet = true;
    this.run.onAnswer(this, now);
  }
}

/** A run of the decide function over the items `ids` (indices into the queue's items). */
export class DecideRun {
  closed = false;
  readonly failed: { id: number; kind: FailureKind }[] = [];
  private readonly settled: Uint8Array;
  private settledCount = 0;
  private readonly aloneTries: number;
  private readonly mustWatchCalls: boolean;

  constructor(
    readonly ids: readonly number[],
    readonly startedAt: number,
    private readonly ctx: RunContext,
  ) {
    this.settled = new Uint8Array(ids.length);
    this.aloneTries = Math.max(1, ctx.decide.endpointAttempts - 1);
    // A per-call timeout event only when the endpoint can answer later than the client waits.
    this.mustWatchCalls = ctx.endpoint.latestAnswerSeconds >= ctx.decide.endpointTimeoutSeconds;
    ctx.heap.at(startedAt + ctx.decide.timeoutSeconds, expire, this);
    ctx.heap.at(startedAt + ctx.overheadSeconds, begin, this);
  }

  /** Sends the first calls. */
  begin(now: number): void {
    const size = Math.max(1, this.ctx.decide.endpointBatchItems);
    const all = this.ids.map((_, i) => i);
    for (let i = 0; i < all.length; i += size)
      this.send(new DecideCall(this, all.slice(i, i + size), 1, 0), now);
  }

  /** The function timed out: whatever is unsettled fails. */
  expire(now: number): void {
    if (this.closed) return;
    const left: number[] = [];
    for (let i = 0; i < this.ids.length; i++) if (!this.settled[i]) left.push(i);
    this.fail(left, FAILURE.functionTimeout, now);
  }

  /** A call was answered (in time): settle what was decided, try again what was refused. */
  onAnswer(call: DecideCall, now: number): void {
    const again: number[] = [];
    let kind: FailureKind = FAILURE.deadline;
    for (let i = 0; i < call.items.length; i++) {
      const result = call.results[i];
      if (result === ITEM.ok) this.ok(call.items[i]!, now);
      else {
        again.push(call.items[i]!);
        kind = result === ITEM.queueFull ? FAILURE.queueFull : FAILURE.deadline;
        if (kind === FAILURE.queueFull) this.ctx.refusals.queueFull++;
        else this.ctx.refusals.deadline++;
      }
    }
    if (again.length === 0) return;
    if (this.ctx.overloadFailsAtOnce) this.fail(again, kind, now);
    else if (call.attempt === 0) this.retryAlone(again[0]!, call.aloneTry, kind, now);
    else if (call.attempt < this.ctx.decide.endpointAttempts)
      this.send(new DecideCall(this, again, call.attempt + 1, 0), now);
    else this.fail(again, kind, now);
  }

  /** A call failed as a whole (throttled, or the client stopped waiting). */
  onWholeFailure(call: DecideCall, kind: FailureKind, now: number): void {
    if (this.closed) return;
    if (this.ctx.overloadFailsAtOnce && isOverload(kind)) {
      this.fail(call.items, kind, now);
      return;
    }
    if (call.attempt === 0) {
      this.retryAlone(call.items[0]!, call.aloneTry, kind, now);
      return;
    }
    if (call.attempt >= this.ctx.decide.endpointAttempts) {
      this.fail(call.items, kind, now);
      return;
    }
    for (const item of call.items) this.send(new DecideCall(this, [item], 0, 1), now);
  }

  /** The client's per-call timeout passed: unless answered, the call is abandoned and fails whole. */
  timedOut(call: DecideCall, now: number): void {
    if (call.answeredYet || this.closed) return;
    call.abandoned = true;
    this.ctx.refusals.timeout += call.items.length;
    this.onWholeFailure(call, FAILURE.timeout, now);
  }

  private retryAlone(item: number, tryNo: number, kind: FailureKind, now: number): void {
    if (tryNo < this.aloneTries) this.send(new DecideCall(this, [item], 0, tryNo + 1), now);
    else this.fail([item], kind, now);
  }

  private send(call: DecideCall, now: number): void {
    if (this.closed) return;
    if (!this.ctx.endpoint.send(call, now)) {
      this.ctx.refusals.throttled += call.items.length;
      this.onWholeFailure(call, FAILURE.throttled, now);
      return;
    }
    if (this.mustWatchCalls) this.ctx.heap.at(now + this.ctx.decide.endpointTimeoutSeconds, watch, call);
  }

  private ok(item: number, now: number): void {
    this.settle(item);
    this.ctx.decided(this.ids[item]!, now);
    this.closeIfDone(now);
  }

  private fail(items: readonly number[], kind: FailureKind, now: number): void {
    for (const item of items) {
      this.settle(item);
      this.failed.push({ id: this.ids[item]!, kind });
    }
    this.closeIfDone(now);
  }

  private settle(item: number): void {
    if (!this.settled[item]) {
      this.settled[item] = 1;
      this.settledCount++;
    }
  }

  private closeIfDone(now: number): void {
    if (this.closed || this.settledCount < this.ids.length) return;
    this.closed = true;
    this.ctx.ended(this, now);
  }
}

const expire = (now: number, run: DecideRun) => run.expire(now);
const begin = (now: number, run: DecideRun) => run.begin(now);
const watch = (now: number, call: DecideCall) => call.run.timedOut(call, now);
