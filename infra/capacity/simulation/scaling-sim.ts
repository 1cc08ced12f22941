/**
 * Application Auto Scaling in the simulation. Every 10 s the metrics are sampled (what each one
 * reads: `scaling-metrics.ts`); each policy turns them into datapoints of its period. Target
 * tracking scales out after three datapoints above its target, to ceil(instances × metric /
 * target), and in after fifteen minutes below 90% of it; a step policy acts while its alarm (M of
 * N datapoints) is in ALARM, again every minute. During a scale-out cooldown only a larger
 * capacity than the one already asked for is applied; no scale-in happens during either cooldown.
 * Out wins over in; in happens only when every target policy agrees.
 */
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import type { AlarmShape, PolicyShape, StepPolicyShape, TargetTrackingShape } from "../shape.ts";
import type { SimEndpoint } from "./endpoint-sim.ts";
import { metricValue, SAMPLE_SECONDS, type Sample } from "./scaling-metrics.ts";
import type { SimQueue } from "./sqs-sim.ts";

export { SAMPLE_SECONDS } from "./scaling-metrics.ts";

const S = AWS_BEHAVIOUR.scaling;

/** A capacity change and the policy that made it. */
export interface ScaleEvent {
  readonly at: number;
  readonly from: number;
  readonly to: number;
  readonly policy: string;
}

/** A datapoint one policy saw. */
export interface Datapoint {
  readonly at: number;
  readonly policy: string;
  readonly value: number;
}

/** What a policy asks for: a capacity, and its name. */
type Proposal = { to: number; policy: string } | undefined;

interface PolicyState {
  readonly policy: PolicyShape;
  readonly values: number[];
  /** One-minute values (target tracking's scale-in alarm). */
  readonly minutes: number[];
  inAlarm: boolean;
  lastInvoked: number;
  lastOut: number;
  lastIn: number;
  /** Capacity when the last scale-out began (a step policy's cooldown base). */
  outBase: number;
}

/** The scaler: call `tick` every {@link SAMPLE_SECONDS}. */
export class SimScaler {
  private readonly samples: Sample[] = [];
  private readonly states: PolicyState[];
  readonly events: ScaleEvent[] = [];
  readonly datapoints: Datapoint[] = [];

  constructor(
    policies: readonly PolicyShape[],
    private readonly endpoint: SimEndpoint,
    private readonly queue: SimQueue,
  ) {
    this.states = policies.map((policy) => {
      const period = policy.kind === "target" ? policy.periodSeconds : policy.alarm.periodSeconds;
      if (period % SAMPLE_SECONDS !== 0)
        throw new RangeError(`policy ${policy.name}: a period of ${period} s is not a multiple of 10 s`);
      return {
        policy,
        values: [],
        minutes: [],
        inAlarm: false,
        lastInvoked: -Infinity,
        lastOut: -Infinity,
        lastIn: -Infinity,
        outBase: 0,
      };
    });
  }

  /** Samples the metrics at `now` and lets every policy whose period ends now act. */
  tick(now: number): void {
    const { inService } = this.endpoint.counts;
    this.samples.push({
      invocations: this.endpoint.invocations,
      concurrency: this.endpoint.readConcurrency(now),
      inService,
      visible: this.queue.visible(now),
      backlog: this.queue.waiting(now),
      desired: this.endpoint.desired,
      oldestAge: this.queue.oldestAge(now),
    });
    this.endpoint.invocations = 0;
    const desired = this.endpoint.desired;
    const out: NonNullable<Proposal>[] = [];
    const inward: NonNullable<Proposal>[] = [];
    let targetsAgreeIn = true;
    for (const state of this.states) {
      const proposal = this.evaluate(state, now, desired, inService);
      if (
        state.policy.kind === "target" &&
        !state.policy.disableScaleIn &&
        !(proposal && proposal.to < desired)
      )
        targetsAgreeIn = false;
      if (proposal && proposal.to > desired) out.push(proposal);
      else if (proposal && proposal.to < desired) inward.push(proposal);
    }
    const { minInstances, maxInstances } = this.endpoint.shape;
    const chosen =
      out.length > 0
        ? out.reduce((a, b) => (b.to > a.to ? b : a))
        : inward.length > 0 &&
            !this.stepUpInAlarm() &&
            (targetsAgreeIn || inward.every((p) => this.isStep(p.policy)))
          ? inward.reduce((a, b) => (b.to > a.to ? b : a))
          : undefined;
    if (!chosen) return;
    const to = Math.min(maxInstances, Math.max(minInstances, chosen.to));
    if (to === desired) return;
    for (const state of this.states)
      if (state.policy.name === chosen.policy) {
        if (to > desired) {
          state.lastOut = now;
          state.outBase = desired;
        } else state.lastIn = now;
      }
    this.events.push({ at: now, from: desired, to, policy: chosen.policy });
    this.endpoint.setDesired(to, now);
  }

  /** Whether a step policy that adds capacity has its alarm in ALARM (out wins over in). */
  private stepUpInAlarm(): boolean {
    return this.states.some(
      (s) => s.policy.kind === "step" && s.inAlarm && s.policy.steps.some((step) => step.adjustment > 0),
    );
  }

  private isStep(name: string): boolean {
    return this.states.some((s) => s.policy.name === name && s.policy.kind === "step");
  }

  /** The policy's datapoint if its period ends now, and what capacity it asks for. */
  private evaluate(state: PolicyState, now: number, desired: number, inService: number): Proposal {
    const p = state.policy;
    const period = p.kind === "target" ? p.periodSeconds : p.alarm.periodSeconds;
    if (Math.round(now) % period !== 0) return undefined;
    const metric = p.kind === "target" ? p.metric : p.alarm.metric;
    const read = metricValue(this.samples, metric, period / SAMPLE_SECONDS);
    const value = p.kind === "target" && p.cap !== undefined ? Math.min(p.cap, read) : read;
    state.values.push(value);
    this.datapoints.push({ at: now, policy: p.name, value });
    if (p.kind === "target") {
      if (Math.round(now) % S.standardPeriodSeconds === 0)
        state.minutes.push(
          Math.min(
            p.cap ?? Infinity,
            metricValue(this.samples, metric, S.standardPeriodSeconds / SAMPLE_SECONDS),
          ),
        );
      return this.target(state, p, now, desired, inService, value);
    }
    return this.step(state, p, now, desired, value);
  }

  private target(
    state: PolicyState,
    p: TargetTrackingShape,
    now: number,
    desired: number,
    inService: number,
    value: number,
  ): Proposal {
    const high = state.values.slice(-S.scaleOutDatapoints);
    const alarm = high.length === S.scaleOutDatapoints && high.every((v) => v > p.target);
    const invoke = alarm && (!state.inAlarm || now - state.lastInvoked >= S.alarmRepeatSeconds);
    state.inAlarm = alarm;
    if (invoke) {
      state.lastInvoked = now;
      // The high alarm only adds: instances still starting count toward what it asked for.
      const to = Math.ceil((Math.max(1, inService) * value) / p.target);
      return to > desired ? { to, policy: p.name } : undefined;
    }
    if (alarm) return undefined;
    const low = state.minutes.slice(-S.scaleInDatapoints);
    const lowAlarm = low.length === S.scaleInDatapoints && low.every((v) => v < p.target * S.scaleInFraction);
    if (!lowAlarm || p.disableScaleIn || now - state.lastIn < p.scaleInCooldown) return undefined;
    if (now - state.lastOut < p.scaleOutCooldown) return undefined;
    const to = Math.ceil((inService * low[low.length - 1]!) / p.target);
    return to < desired ? { to, policy: p.name } : undefined;
  }

  private step(
    state: PolicyState,
    p: StepPolicyShape,
    now: number,
    desired: number,
    value: number,
  ): Proposal {
    const alarm = p.alarm;
    const recent = state.values.slice(-alarm.evaluationPeriods);
    const breaching = recent.filter((v) => breaches(alarm, v)).length;
    const inAlarm = breaching >= alarm.datapointsToAlarm;
    const invoke = inAlarm && (!state.inAlarm || now - state.lastInvoked >= S.alarmRepeatSeconds);
    state.inAlarm = inAlarm;
    if (!invoke) return undefined;
    state.lastInvoked = now;
    const diff = value - alarm.threshold;
    // Above the threshold an interval holds its lower bound, below it its upper bound (AAS's rule).
    const below = alarm.comparison === "below" || alarm.comparison === "atOrBelow";
    const step = p.steps.find((s) =>
      below
        ? (s.lower === undefined || diff > s.lower) && (s.upper === undefined || diff <= s.upper)
        : (s.lower === undefined || diff >= s.lower) && (s.upper === undefined || diff < s.upper),
    );
    if (!step) return undefined;
    const cooling = now - Math.max(state.lastOut, state.lastIn) < p.cooldown;
    if (step.adjustment < 0 && cooling) return undefined;
    // In a scale-out cooldown the capacity asked for by the initiating scale-out counts toward this one.
    const base = cooling && now - state.lastOut < p.cooldown ? state.outBase : desired;
    const to = adjusted(p.adjustmentType, base, step.adjustment);
    // A step up never lowers the capacity, nor a step down raises it.
    if (step.adjustment > 0 ? to <= desired : to >= desired) return undefined;
    return { to, policy: p.name };
  }
}

function breaches(alarm: AlarmShape, value: number): boolean {
  switch (alarm.comparison) {
    case "above":
      return value > alarm.threshold;
    case "atOrAbove":
      return value >= alarm.threshold;
    case "below":
      return value < alarm.threshold;
    case "atOrBelow":
      return value <= alarm.threshold;
  }
}

function adjusted(type: StepPolicyShape["adjustmentType"], base: number, adjustment: number): number {
  if (type === "ExactCapacity") return adjustment;
  if (type === "ChangeInCapacity") return base + adjustment;
  // Percent: fractions of one instance round away from zero, larger changes toward it.
  const change = (base * adjustment) / 100;
  return base + (Math.abs(change) < 1 ? Math.sign(change) : Math.trunc(change));
}
