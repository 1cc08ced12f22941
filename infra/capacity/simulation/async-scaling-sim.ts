/**
 * The async endpoint's instances and its two scaling policies as the async lane's simulation
 * (`async-sim.ts`) evaluates them on one-minute datapoints: the wake-up step policy on
 * `HasBacklogWithoutCapacity` (its alarm's action repeats every minute while in ALARM, subject to
 * its cooldown) and target tracking on `ApproximateBacklogSizePerInstance` (out after
 * `scaleOutDatapoints` above the target, in after `scaleInDatapoints` below 90% of it, each with
 * its cooldown). Kept apart from the objects' life so that each reads on its own.
 */
import type { AsyncShape } from "../async-template.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";

/** One instance: billed from its start to its removal, serving from `readyAt`. */
export interface SimulatedInstance {
  readonly startedAt: number;
  readonly readyAt: number;
  busyUntil: number;
  removedAt?: number;
}

/** The instances and the two scaling policies. */
export class AsyncScalingState {
  private readonly instances: SimulatedInstance[] = [];
  private desired: number;
  private above = 0;
  private below = 0;
  private withoutCapacity = 0;
  private lastOut = Number.NEGATIVE_INFINITY;
  private lastIn = Number.NEGATIVE_INFINITY;
  private lastWake = Number.NEGATIVE_INFINITY;
  /** Most instances at once (starting ones included). */
  peak = 0;

  /** `instanceStartSeconds`: from a scale-out decision until a new instance serves. */
  constructor(
    private readonly shape: AsyncShape,
    private readonly instanceStartSeconds: number = AWS_BEHAVIOUR.sageMaker.instanceStartSeconds,
  ) {
    this.desired = shape.minInstances;
    for (let i = 0; i < shape.minInstances; i++)
      this.instances.push({ startedAt: 0, readyAt: 0, busyUntil: 0 });
  }

  private live(): SimulatedInstance[] {
    return this.instances.filter((i) => i.removedAt === undefined);
  }

  /** Instances serving at `now`. */
  inService(now: number): SimulatedInstance[] {
    return this.live().filter((i) => i.readyAt <= now);
  }

  /** Instances started and not yet serving. */
  starting(now: number): number {
    return this.live().length - this.inService(now).length;
  }

  /** Whether the endpoint is back at its minimum, and asks for no more. */
  atMinimum(): boolean {
    return this.live().length === this.shape.minInstances && this.desired === this.shape.minInstances;
  }

  /** Billed instance seconds up to `now`. */
  billedSeconds(now: number): number {
    return this.instances.reduce((sum, i) => sum + ((i.removedAt ?? now) - i.startedAt), 0);
  }

  /** One datapoint of each metric (`backlog`: objects queued or running), the policies' answers, and the instances they ask for. */
  evaluate(now: number, backlog: number): void {
    const s = this.shape;
    const inService = this.inService(now).length;
    const perInstance = inService > 0 ? backlog / inService : backlog;
    this.withoutCapacity = backlog > 0 && inService === 0 ? this.withoutCapacity + 1 : 0;
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
      this.instances.push({ startedAt: now, readyAt: now + this.instanceStartSeconds, busyUntil: 0 });
    const surplus = live.length - this.desired;
    if (surplus > 0) {
      const idleFirst = [...live].sort((a, b) => a.busyUntil - b.busyUntil);
      for (const instance of idleFirst.slice(0, surplus))
        instance.removedAt = Math.max(now, instance.busyUntil);
    }
    this.peak = Math.max(this.peak, this.live().length);
  }
}
