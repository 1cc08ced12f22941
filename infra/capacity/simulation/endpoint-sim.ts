/**
 * The endpoint in the simulation. Real-time: instances that each evaluate one item at a time,
 * a request's items one after another, each item waiting its turn behind the other requests'
 * (FIFO, as the container's work queue), at most `queueSize` waiting before the next is refused
 * with 503 queue_full, and a deadline: per call (the remaining items of a call past it are
 * answered 504 at once) or, in older containers, per item (an item that waited past it is
 * answered 504 and the call goes on with the next). New instances take minutes before they take
 * traffic. Serverless: up to
 * `maxConcurrency` containers of one request each, cold-started on first use, and a throttle
 * (ThrottlingException) past that.
 */
import type { SeededRandom } from "../../../shared/domain/random.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import { type EndpointRequest, ITEM, SimInstance } from "../endpoint-request.ts";
import type { EndpointShape } from "../shape.ts";
import type { EventHeap } from "./event-heap.ts";

/** What the endpoint needs from the simulation. */
export interface EndpointContext {
  readonly heap: EventHeap;
  readonly random: SeededRandom;
  /** Seconds the model takes for the next item. */
  readonly serviceSeconds: () => number;
  /** The longest that can be (Infinity for unbounded service times). */
  readonly maxServiceSeconds: number;
}

/** The simulated endpoint. */
export class SimEndpoint {
  private readonly all: SimInstance[] = [];
  private readonly inService: SimInstance[] = [];
  private starting = 0;
  private inflight = 0;
  private areaAt = 0;
  private area = 0;
  private areaSince = 0;
  /** InvokeEndpoint calls that reached an instance, since the counter was last read. */
  invocations = 0;
  /** Serverless: seconds of container work (billed by memory and duration). */
  busySeconds = 0;

  constructor(
    readonly shape: EndpointShape,
    private readonly ctx: EndpointContext,
  ) {
    for (let i = 0; i < shape.initialInstances; i++) this.add(0, 0);
  }

  /** Instances taking traffic, and those still starting. */
  get counts(): { inService: number; starting: number } {
    return { inService: this.inService.length, starting: this.starting };
  }

  /** The instance count scaling works on: in service plus starting. */
  get desired(): number {
    return this.inService.length + this.starting;
  }

  /** Sends `request`; false when refused outright (serverless throttle, nothing in service). */
  send(request: EndpointRequest, now: number): boolean {
    const instance = this.route(now);
    if (!instance) return false;
    this.invocations++;
    this.changeInflight(now, +1);
    instance.inflight++;
    request.instance = instance;
    // SageMaker's own limit, for calls whose answer could come later than it.
    if (this.latestAnswerSeconds > AWS_BEHAVIOUR.sageMaker.invocationTimeoutSeconds)
      this.ctx.heap.at(
        now + AWS_BEHAVIOUR.sageMaker.invocationTimeoutSeconds,
        this.onInvocationTimeout,
        request,
      );
    if (instance.readyAt > now) this.ctx.heap.at(instance.readyAt, this.receive, request);
    else this.receive(now, request);
    return true;
  }

  /**
   * The latest an answer can come after a request is sent: a cold start, the deadline, and the
   * item running when it passes (which finishes). Infinity when service times are unbounded or
   * each item has a deadline of its own.
   */
  get latestAnswerSeconds(): number {
    if (this.shape.deadlineScope === "item") return Number.POSITIVE_INFINITY;
    const cold = this.shape.mode === "serverless" ? AWS_BEHAVIOUR.sageMaker.serverlessColdStartSeconds : 0;
    return cold + this.shape.deadlineSeconds + this.ctx.maxServiceSeconds;
  }

  private readonly receive = (now: number, request: EndpointRequest) => {
    request.deadline = now + this.shape.deadlineSeconds;
    this.advance(request, now);
  };

  /** The time-average of requests in flight per in-service instance since the last call. */
  readConcurrency(now: number): number {
    this.changeInflight(now, 0);
    const span = now - this.areaSince;
    const value = span > 0 ? this.area / span / Math.max(1, this.inService.length) : 0;
    this.area = 0;
    this.areaSince = now;
    return value;
  }

  /** Real-time: launches or removes instances toward `count`. */
  setDesired(count: number, now: number): void {
    const start = AWS_BEHAVIOUR.sageMaker.instanceStartSeconds;
    for (let n = this.desired; n < count; n++) this.add(now, now + start);
    for (let n = this.desired; n > count; n--) this.removeOne(now);
  }

  /** Instance-seconds billed up to `end` (real-time). */
  instanceSeconds(end: number): number {
    return this.all.reduce((sum, i) => sum + (Math.min(i.stoppedAt ?? end, end) - i.launchedAt), 0);
  }

  private add(now: number, readyAt: number): SimInstance {
    const instance = new SimInstance(now, readyAt);
    this.all.push(instance);
    if (this.shape.mode === "serverless" || readyAt <= now) this.inService.push(instance);
    else {
      this.starting++;
      this.ctx.heap.at(readyAt, this.ready, instance);
    }
    return instance;
  }

  private readonly ready = (_: number, instance: SimInstance) => {
    if (instance.stoppedAt !== undefined) return;
    this.starting--;
    this.inService.push(instance);
  };

  private removeOne(now: number): void {
    const pending = this.all.findLast((i) => i.stoppedAt === undefined && i.readyAt > now);
    if (pending) {
      pending.stoppedAt = now;
      this.starting--;
      return;
    }
    const instance = this.inService.pop();
    if (!instance) return;
    instance.draining = true;
    if (instance.inflight === 0) instance.stoppedAt = now;
  }

  private route(now: number): SimInstance | undefined {
    if (this.shape.mode === "serverless") {
      const idle = this.inService.find((i) => i.inflight === 0);
      if (idle) return idle;
      if (this.inService.length >= this.shape.maxInstances) return undefined;
      return this.add(now, now + AWS_BEHAVIOUR.sageMaker.serverlessColdStartSeconds);
    }
    const list = this.inService;
    if (list.length === 0) return undefined;
    const draw = () => list[Math.floor(this.ctx.random.nextFloat() * list.length)]!;
    if (this.shape.routing === "random") return draw();
    if (this.shape.routing === "least-outstanding") {
      let best = draw();
      for (let n = 1; n < AWS_BEHAVIOUR.sageMaker.leastOutstandingDraws; n++) {
        const other = draw();
        if (other.inflight < best.inflight) best = other;
      }
      return best;
    }
    let best = list[0]!;
    for (const i of list) if (i.inflight < best.inflight) best = i;
    return best;
  }

  /** The request's next item: run it, queue it, or answer what is left. */
  private advance(request: EndpointRequest, now: number): void {
    const instance = request.instance!;
    if (request.next >= request.size) {
      this.respond(request, now);
      return;
    }
    if (request.cut || (this.shape.deadlineScope === "call" && now >= request.deadline)) {
      this.finish(request, ITEM.deadline, now);
      return;
    }
    if (!instance.running && instance.live === 0) {
      this.start(instance, request, now);
      return;
    }
    if (this.shape.mode === "serverless" || instance.live >= this.shape.queueSize) {
      this.finish(request, ITEM.queueFull, now);
      return;
    }
    instance.queue.push(request);
    instance.live++;
    request.waiting = true;
    // Per item, the wait starts now; per call, it started when the call arrived.
    if (this.shape.deadlineScope === "item") request.deadline = now + this.shape.deadlineSeconds;
    if ((!request.deadlineSet || this.shape.deadlineScope === "item") && Number.isFinite(request.deadline)) {
      request.deadlineSet = true;
      this.ctx.heap.at(request.deadline, this.onDeadline, request);
    }
  }

  private start(instance: SimInstance, request: EndpointRequest, now: number): void {
    instance.running = request;
    const seconds = this.ctx.serviceSeconds();
    if (this.shape.mode === "serverless") this.busySeconds += seconds;
    this.ctx.heap.at(now + seconds, this.itemDone, instance);
  }

  private readonly itemDone = (now: number, instance: SimInstance) => {
    const request = instance.running!;
    request.results[request.next++] = ITEM.ok;
    instance.running = undefined;
    // The work queue starts the next waiter before this request's next item joins the queue.
    this.startNext(instance, now);
    this.advance(request, now);
  };

  private startNext(instance: SimInstance, now: number): void {
    while (instance.head < instance.queue.length) {
      const next = instance.queue[instance.head++]!;
      if (!next.waiting) continue;
      next.waiting = false;
      instance.live--;
      if (instance.head > 256 && instance.head * 2 > instance.queue.length) {
        instance.queue.splice(0, instance.head);
        instance.head = 0;
      }
      this.start(instance, next, now);
      return;
    }
  }

  private readonly onInvocationTimeout = (now: number, request: EndpointRequest) => {
    if (request.done) return;
    // The connection closes: a waiting item leaves the queue; a running one finishes first.
    request.cut = true;
    if (!request.waiting) return;
    request.waiting = false;
    request.instance!.live--;
    this.finish(request, ITEM.deadline, now);
  };

  private readonly onDeadline = (now: number, request: EndpointRequest) => {
    // Stale: the request is not waiting, or waits again under a later deadline (per item).
    if (request.done || !request.waiting || now < request.deadline) return;
    // A waiter whose deadline passes leaves the queue at once and stops counting against it.
    request.waiting = false;
    request.instance!.live--;
    if (this.shape.deadlineScope === "call") {
      this.finish(request, ITEM.deadline, now);
      return;
    }
    request.results[request.next++] = ITEM.deadline;
    this.advance(request, now);
  };

  private finish(request: EndpointRequest, result: number, now: number): void {
    request.results.fill(result, request.next);
    request.next = request.size;
    this.respond(request, now);
  }

  private respond(request: EndpointRequest, now: number): void {
    const instance = request.instance!;
    request.done = true;
    instance.inflight--;
    this.changeInflight(now, -1);
    if (instance.draining && instance.inflight === 0) instance.stoppedAt = now;
    request.answered(now);
  }

  private changeInflight(now: number, delta: number): void {
    this.area += this.inflight * (now - this.areaAt);
    this.areaAt = now;
    this.inflight += delta;
  }
}
