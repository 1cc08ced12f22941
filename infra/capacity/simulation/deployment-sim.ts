/**
 * A blue/green deployment of the real-time endpoint, minute by minute: the new fleet starts (or
 * never passes /ping, and SageMaker's startup health check rolls it back), takes a canary's share
 * of the calls and bakes, then all of them and bakes again; every minute of a bake the rollback
 * alarms are evaluated on the metrics the new fleet, the variant and the endpoint prober would
 * publish, and one in ALARM rolls the deployment back. The canary's share of the calls is its
 * share of the capacity (least-outstanding routing would send a refusing fleet more and a slow one
 * less; neither changes which alarm fires). Without a seed every minute has the expected calls;
 * with one, upstream calls arrive as a Poisson process and each call (the prober's too) reaches
 * the new fleet with its share's chance, so a few calls a minute leave it uncalled at times.
 */
import { SeededRandom } from "../../../shared/domain/random.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import type {
  AlarmQuery,
  DeploymentPlan,
  MetricSource,
  RollbackAlarm,
} from "../template/template-deployment.ts";

/** How the new fleet behaves. */
export type NewFleet =
  | { readonly kind: "healthy" }
  /** Answers 503 to every call (model_loading, a broken server). */
  | { readonly kind: "refusesAll" }
  /** Answers every call, `factor` times slower. */
  | { readonly kind: "slower"; readonly factor: number }
  /** Never passes /ping (a model that never finishes loading). */
  | { readonly kind: "neverReady" };

/** The traffic during the deployment. */
export interface DeploymentTraffic {
  /** Upstream InvokeEndpoint calls per minute (0: a quiet hour). */
  readonly callsPerMinute: number;
  /** Seconds a call takes on a healthy fleet (ModelLatency). */
  readonly callSeconds: number;
  /** The share of calls a healthy fleet refuses (503 queue_full while saturated). @default 0 */
  readonly refusedShare?: number;
  /** Draws the calls from this seed (Poisson arrivals, each routed by chance); none: expected values. */
  readonly seed?: number;
  /**
   * With a seed: the chance that a minute has no prober run (a failed run, or its figures
   * published in the next minute). @default 0
   */
  readonly proberMissedShare?: number;
}

/** How a deployment ended. */
export interface DeploymentOutcome {
  readonly outcome: "completed" | "rolledBack";
  /** Minutes from the update's start. */
  readonly atMinute: number;
  /** The alarm that rolled it back, or SageMaker's startup health check. */
  readonly by: string | undefined;
}

type Minute = Record<MetricSource, number | undefined> & {
  greenLatencyCalls: number;
  variantLatencyCalls: number;
};

/** One minute's calls: upstream and the prober's, split between the new fleet and the old. */
interface Calls {
  readonly green: number;
  readonly blue: number;
  /** Of the new fleet's calls, those refused. */
  readonly greenRefused: number;
  readonly probes: number;
}

/** Draws counts from a seed, or gives their expected values. */
interface Draw {
  poisson(mean: number): number;
  binomial(n: number, p: number): number;
  /** Whether something with chance `p` happened (never, for expected values). */
  happens(p: number): boolean;
}

const expected: Draw = { poisson: (mean) => mean, binomial: (n, p) => n * p, happens: () => false };

function drawn(seed: number): Draw {
  const random = new SeededRandom(seed);
  return {
    poisson(mean) {
      // Knuth's product of uniforms: a few calls a minute at most here.
      const limit = Math.exp(-mean);
      let count = 0;
      for (let product = random.nextFloat(); product > limit; product *= random.nextFloat()) count++;
      return count;
    },
    binomial(n, p) {
      let count = 0;
      for (let i = 0; i < n; i++) if (random.nextFloat() < p) count++;
      return count;
    },
    happens: (p) => p > 0 && random.nextFloat() < p,
  };
}

/** The calls of one minute with `share` of them on the new fleet and `probes` from the prober. */
function callsOf(
  traffic: DeploymentTraffic,
  fleet: NewFleet,
  share: number,
  probes: number,
  draw: Draw,
): Calls {
  const upstream = draw.poisson(traffic.callsPerMinute);
  const upstreamToGreen = draw.binomial(upstream, share);
  const green = upstreamToGreen + draw.binomial(probes, share);
  const refusedShare = fleet.kind === "refusesAll" ? 1 : (traffic.refusedShare ?? 0);
  return {
    green,
    blue: upstream + probes - green,
    greenRefused: refusedShare === 1 ? green : draw.binomial(green, refusedShare),
    probes,
  };
}

/** The metrics of one minute's `calls`. */
function minuteOf(traffic: DeploymentTraffic, fleet: NewFleet, calls: Calls, baking: boolean): Minute {
  const { green, blue } = calls;
  const all = green + blue;
  const greenLatency = traffic.callSeconds * (fleet.kind === "slower" ? fleet.factor : 1);
  const latencySum = green * greenLatency + blue * traffic.callSeconds;
  const some = (x: number) => (x > 0 ? x : undefined);
  // Every fleet simulated here speaks: the prober hears a reply to each call, a broken fleet's
  // 503 included (the refusal alarm judges those on the new fleet's own metrics).
  return {
    greenCalls: some(green),
    greenRefused: green > 0 ? calls.greenRefused : undefined,
    greenLatency: green > 0 ? greenLatency : undefined,
    greenLatencyCalls: green,
    variantCalls: some(all),
    variantLatency: all > 0 ? latencySum / all : undefined,
    variantLatencyCalls: all,
    baking: baking ? 1 : 0,
    endpointFailures: undefined,
    probeReplies: calls.probes > 0 ? calls.probes : undefined,
  };
}
/** A query's value over its period ending with minute `end` (inclusive). */
function aggregate(history: readonly Minute[], end: number, query: AlarmQuery): number | undefined {
  const window = history.slice(Math.max(0, end + 1 - query.periodMinutes), end + 1);
  const values = window.map((m) => m[query.source]).filter((v): v is number => v !== undefined);
  if (values.length === 0) return undefined;
  if (query.stat === "Sum") return values.reduce((a, b) => a + b, 0);
  if (query.stat === "Maximum") return Math.max(...values);
  // Latency averages weigh each minute by its calls, as CloudWatch's average over requests does.
  const weight = query.source === "greenLatency" ? "greenLatencyCalls" : "variantLatencyCalls";
  let sum = 0;
  let calls = 0;
  for (const m of window)
    if (m[query.source] !== undefined) {
      sum += m[query.source]! * m[weight];
      calls += m[weight];
    }
  return calls > 0 ? sum / calls : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Whether `alarm` is in ALARM after minute `now`. */
function inAlarm(alarm: RollbackAlarm, history: readonly Minute[], now: number): boolean {
  const period = Math.max(...alarm.queries.map((q) => q.periodMinutes));
  let breaching = 0;
  for (let k = 0; k < alarm.periods; k++) {
    const end = now - k * period;
    if (end < 0) break;
    const values = Object.fromEntries(alarm.queries.map((q) => [q.id, aggregate(history, end, q)]));
    const value = Object.values(values).every((v) => v === undefined) ? undefined : alarm.value(values);
    const breaches =
      value === undefined
        ? alarm.missingBreaches
        : alarm.comparison === "above"
          ? value > alarm.threshold
          : value >= alarm.threshold;
    if (breaches) breaching++;
  }
  return breaching >= alarm.datapoints;
}

/** Runs one deployment of `plan` with the new fleet `fleet` under `traffic`. */
export function simulateDeployment(
  plan: DeploymentPlan,
  fleet: NewFleet,
  traffic: DeploymentTraffic,
): DeploymentOutcome {
  const start = Math.ceil(AWS_BEHAVIOUR.sageMaker.instanceStartSeconds / 60);
  if (fleet.kind === "neverReady")
    return {
      outcome: "rolledBack",
      atMinute: Math.ceil(plan.startupSeconds / 60),
      by: "startup health check",
    };
  const canaryEnd = start + (plan.canaryShare === undefined ? 0 : Math.ceil(plan.canaryBakeSeconds / 60));
  const end = canaryEnd + Math.ceil(plan.bakeSeconds / 60);
  const canaryTraffic = plan.canaryShare === undefined ? 1 : plan.canaryShare / (1 + plan.canaryShare);
  const draw = traffic.seed === undefined ? expected : drawn(traffic.seed);
  const history: Minute[] = [];
  for (let minute = 0; minute < end; minute++) {
    const baking = minute >= start;
    const share = minute < start ? 0 : minute < canaryEnd ? canaryTraffic : 1;
    // The prober calls only while the new fleet bakes (the flag it reads, like the follower).
    const missed = draw.happens(traffic.proberMissedShare ?? 0);
    const probes = baking && !missed ? (plan.prober?.callsPerMinute ?? 0) : 0;
    history.push(minuteOf(traffic, fleet, callsOf(traffic, fleet, share, probes, draw), baking));
    if (!baking) continue;
    const firing = plan.alarms.find((alarm) => inAlarm(alarm, history, minute));
    if (firing) return { outcome: "rolledBack", atMinute: minute + 1, by: firing.name };
  }
  return { outcome: "completed", atMinute: end, by: undefined };
}
