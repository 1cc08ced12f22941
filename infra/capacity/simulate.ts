/**
 * The capacity model: a discrete-event simulation of SQS → event source mapping → decide
 * function → endpoint instances, with SageMaker's and Lambda's scaling, the container's admission
 * queue and deadline, the client's retries, visibility timeouts and receive counts. It simulates
 * requests and items, not time steps, so a 30-minute run at 1,000 items/s takes seconds; the same
 * seed gives the same run.
 *
 * @example
 * const result = simulate({ shape, load: { ratePerSecond: 10, durationSeconds: 1800 }, secondsPerItem: 1.546 });
 */
import { expectedWaitSeconds, intakeConcurrencyFor } from "../../shared/domain/fleet-reading.ts";
import { SeededRandom } from "../../shared/domain/random.ts";
import { FUNCTION_OVERHEAD_SECONDS } from "./aws-behaviour.ts";
import { arrivalTimes, type LoadProfile } from "./load.ts";
import type { MinuteRow, SimulationResult } from "./result.ts";
import type { PipelineShape } from "./shape.ts";
import { SimEndpoint } from "./simulation/endpoint-sim.ts";
import { EventHeap } from "./simulation/event-heap.ts";
import { DecideRun, isOverload, type RefusalCounters, type RunContext } from "./simulation/invocation-sim.ts";
import { SimMapping } from "./simulation/mapping-sim.ts";
import { SAMPLE_SECONDS, SimScaler } from "./simulation/scaling-sim.ts";
import { SimQueue } from "./simulation/sqs-sim.ts";

/** What to simulate. */
export interface SimulationInput {
  readonly shape: PipelineShape;
  readonly load: LoadProfile;
  /** Seconds one instance (or serverless container) takes per item. */
  readonly secondsPerItem: number;
  /** Service times: the measured figure every time, or exponential with that mean (queueing checks). @default "fixed" */
  readonly service?: "fixed" | "exponential";
  /** Seconds to simulate, at least the load's duration (the rest lets the backlog drain). @default load.durationSeconds */
  readonly runSeconds?: number;
  /** The decide function's own seconds per run before it calls the endpoint. @default FUNCTION_OVERHEAD_SECONDS */
  readonly functionOverheadSeconds?: number;
  /** @default 1 */
  readonly seed?: number;
}

/** Runs the simulation. */
export function simulate(input: SimulationInput): SimulationResult {
  return new Simulation(input).run();
}

class Simulation {
  private readonly runSeconds: number;
  private readonly random: SeededRandom;
  private readonly heap = new EventHeap();
  private readonly queue: SimQueue;
  private readonly endpoint: SimEndpoint;
  private readonly mapping: SimMapping;
  private readonly scaler: SimScaler;
  private readonly refusals: RefusalCounters = { queueFull: 0, deadline: 0, throttled: 0, timeout: 0 };
  private readonly runs: RunContext;
  private readonly firstWait = { sum: 0, count: 0, waited: 0 };
  private readonly lambda = { seconds: 0, runs: 0 };
  private readonly minutes: MinuteRow[] = [];
  private last = { decided: 0, refusals: 0 };
  /** The capacity follower's latest expected wait (seconds), once it has run. */
  private expectedWait: number | undefined;
  private peakInstances: number;

  constructor(private readonly input: SimulationInput) {
    const { shape, load, secondsPerItem: mean } = input;
    this.runSeconds = Math.max(input.runSeconds ?? load.durationSeconds, load.durationSeconds);
    this.random = new SeededRandom(input.seed ?? 1);
    this.queue = new SimQueue(
      arrivalTimes(load, this.random),
      shape.intake.maxReceiveCount,
      shape.overload?.maxItemFailures,
    );
    const exponential = input.service === "exponential";
    this.endpoint = new SimEndpoint(shape.endpoint, {
      heap: this.heap,
      random: this.random,
      serviceSeconds: exponential ? () => -Math.log(1 - this.random.nextFloat()) * mean : () => mean,
      maxServiceSeconds: exponential ? Number.POSITIVE_INFINITY : mean,
    });
    this.scaler = new SimScaler(shape.policies, this.endpoint, this.queue);
    this.mapping = new SimMapping(shape.intake, shape.decide, this.queue, this.heap, (ids, now) =>
      this.startRun(ids, now),
    );
    this.runs = {
      heap: this.heap,
      endpoint: this.endpoint,
      decide: shape.decide,
      overheadSeconds: input.functionOverheadSeconds ?? FUNCTION_OVERHEAD_SECONDS,
      overloadFailsAtOnce: shape.overload !== undefined,
      refusals: this.refusals,
      decided: (id, t) => this.queue.decide(id, t),
      ended: (run, t) => this.runEnded(run, t),
    };
    this.peakInstances = this.endpoint.counts.inService;
  }

  run(): SimulationResult {
    this.heap.at(SAMPLE_SECONDS, this.tick);
    this.mapping.dispatch(0);
    this.heap.runUntil(this.runSeconds);
    return this.result();
  }

  private startRun(ids: number[], now: number): void {
    for (const id of ids)
      if (this.queue.receives[id] === 1) {
        const wait = now - this.queue.arrivals[id]!;
        this.firstWait.sum += wait;
        this.firstWait.count++;
        if (wait > 1e-9) this.firstWait.waited++;
      }
    // The records of a batch reach the endpoint client in no particular order (each does its own
    // table read first), so which of them a deadline cuts off is a matter of chance.
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(this.random.nextFloat() * (i + 1));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    new DecideRun(ids, now, this.runs);
  }

  /** A run ended: its failures go back to the queue, when their visibility says. */
  private runEnded(run: DecideRun, now: number): void {
    this.lambda.seconds += now - run.startedAt;
    this.lambda.runs++;
    const { overload, intake } = this.input.shape;
    const groups = new Map<number, number[]>();
    for (const { id, kind } of run.failed) {
      const busy = overload !== undefined && isOverload(kind);
      if (overload && !busy) this.queue.failures[id]!++;
      // A message stays invisible for the queue's timeout from its receive, unless the function
      // changed it (overload backoff); it cannot reappear before the run that holds it ends.
      const at = busy
        ? now + overload.backoffSeconds(this.queue.receives[id]!, this.random.nextFloat(), this.expectedWait)
        : Math.max(now, run.startedAt + intake.visibilityTimeoutSeconds);
      const group = groups.get(at);
      if (group) group.push(id);
      else groups.set(at, [id]);
    }
    for (const [at, ids] of groups) this.heap.at(at, this.reappear, ids);
    this.mapping.ended(now);
  }

  private readonly reappear = (now: number, ids: number[]) => {
    for (const id of ids) this.queue.reappear(id);
    this.mapping.dispatch(now);
  };

  private readonly tick = (now: number) => {
    this.follow(now);
    this.scaler.tick(now);
    const counts = this.endpoint.counts;
    this.peakInstances = Math.max(this.peakInstances, counts.inService);
    if (Math.round(now) % 60 === 0) {
      const refusals = this.refusalTotal();
      this.minutes.push({
        minute: Math.round(now / 60),
        arrived: this.queue.advance(now),
        decided: this.queue.decided - this.last.decided,
        backlog: this.queue.waiting(now),
        inService: counts.inService,
        starting: counts.starting,
        inFlight: this.mapping.active,
        refusals: refusals - this.last.refusals,
        deadLettered: this.queue.deadLettered,
      });
      this.last = { decided: this.queue.decided, refusals };
    }
    if (now + SAMPLE_SECONDS <= this.runSeconds + 1e-9) this.heap.at(now + SAMPLE_SECONDS, this.tick);
  };

  /** The capacity follower's period: the mapping follows the instances in service; a new expected wait. */
  private follow(now: number): void {
    const follower = this.input.shape.follower;
    if (!follower || Math.round(now) % follower.periodSeconds !== 0) return;
    const instances = this.endpoint.counts.inService;
    this.expectedWait = expectedWaitSeconds({
      visible: this.queue.visible(now),
      instances,
      secondsPerItem: follower.secondsPerItem,
    });
    const wanted = intakeConcurrencyFor(instances, follower.concurrencyPerInstance);
    this.mapping.setMaximumConcurrency(Math.min(follower.maxConcurrency, wanted), now);
  }

  private refusalTotal(): number {
    const r = this.refusals;
    return r.queueFull + r.deadline + r.throttled + r.timeout;
  }

  private receiveHistogram(): number[] {
    const counts: number[] = [];
    const arrived = this.queue.advance(this.runSeconds);
    for (let id = 0; id < arrived; id++) {
      const k = this.queue.receives[id]!;
      while (counts.length <= k) counts.push(0);
      counts[k]!++;
    }
    return counts;
  }

  private result(): SimulationResult {
    const { queue, runSeconds } = this;
    const latencies = queue.latencies.subarray(0, queue.decided).sort();
    const n = latencies.length;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += latencies[i]!;
    return {
      minutes: this.minutes,
      arrived: queue.advance(runSeconds),
      decided: queue.decided,
      waiting: queue.waiting(runSeconds),
      deadLettered: queue.deadLettered,
      p99Seconds: n > 0 ? latencies[Math.min(n - 1, Math.floor(n * 0.99))]! : 0,
      meanSeconds: n > 0 ? sum / n : 0,
      meanQueueWaitSeconds: this.firstWait.count > 0 ? this.firstWait.sum / this.firstWait.count : 0,
      waitedFraction: this.firstWait.count > 0 ? this.firstWait.waited / this.firstWait.count : 0,
      peakInstances: this.peakInstances,
      peakConcurrency: this.mapping.peak,
      refusals: this.refusals,
      receives: this.receiveHistogram(),
      scaleEvents: this.scaler.events,
      datapoints: this.scaler.datapoints,
      usage: {
        seconds: runSeconds,
        instanceSeconds:
          this.input.shape.endpoint.mode === "realtime" ? this.endpoint.instanceSeconds(runSeconds) : 0,
        serverlessBusySeconds: this.endpoint.busySeconds,
        lambdaSeconds: this.lambda.seconds,
        lambdaRuns: this.lambda.runs,
      },
    };
  }
}
