/**
 * A real-time endpoint's deployment as its template asks for it: blue/green traffic shifting (all
 * at once, or a canary share first and its bake), the final bake, the new instances' startup
 * health check, and the rollback alarms named in its auto-rollback configuration, each read as
 * the deployment simulation evaluates it (`deployment-sim.ts`), and the endpoint prober that
 * calls the new fleet while it bakes (`template-prober.ts`).
 */
import { GUARDRAIL_MATH } from "../../../shared/domain/topology/endpoint.ts";
import { METRICS } from "../../../shared/domain/topology/metrics.ts";
import { ENDPOINT_PROBER } from "../../../shared/domain/topology/prober.ts";
import { TemplateShapeError } from "../errors.ts";
import { at, type CfnTemplate, numberAt, type TemplateResource } from "./template.ts";
import { type ProberShape, readProber } from "./template-prober.ts";

/** What an alarm's metric reads, per minute. */
export type MetricSource =
  | "greenCalls"
  | "greenRefused"
  | "greenLatency"
  | "variantCalls"
  | "variantLatency"
  | "baking"
  | "endpointFailures"
  | "probeReplies";

/** One metric query of an alarm: what it reads and how it aggregates over its period. */
export interface AlarmQuery {
  readonly id: string;
  readonly source: MetricSource;
  readonly stat: "Sum" | "Average" | "Maximum";
  readonly periodMinutes: number;
}

/** A rollback alarm as the simulation evaluates it. */
export interface RollbackAlarm {
  readonly name: string;
  readonly queries: readonly AlarmQuery[];
  /** The value of one datapoint from the queries' values (undefined: missing). */
  readonly value: (values: Readonly<Record<string, number | undefined>>) => number | undefined;
  readonly threshold: number;
  readonly comparison: "above" | "atOrAbove";
  readonly periods: number;
  readonly datapoints: number;
  readonly missingBreaches: boolean;
}

/** The deployment plan. */
export interface DeploymentPlan {
  /** The canary's share of the new fleet's capacity (0..1), or undefined for all at once. */
  readonly canaryShare: number | undefined;
  readonly canaryBakeSeconds: number;
  readonly bakeSeconds: number;
  /** Seconds a new instance may take to pass /ping before SageMaker gives up (and rolls back). */
  readonly startupSeconds: number;
  readonly alarms: readonly RollbackAlarm[];
  /** The endpoint prober (`template-prober.ts`), or undefined when the template has none. */
  readonly prober: ProberShape | undefined;
}

const FILLED = (v: number | undefined) => v ?? 0;

/** The expressions the stack writes, evaluated: a datapoint from its queries' values. */
const EXPRESSIONS: Record<string, RollbackAlarm["value"]> = {
  [GUARDRAIL_MATH.refusedShare]: (v) => (FILLED(v.calls) > 0 ? FILLED(v.refused) / FILLED(v.calls) : 0),
  [GUARDRAIL_MATH.slowerThanVariant]: (v) =>
    FILLED(v.variant) > 0 ? FILLED(v.green) / FILLED(v.variant) : 0,
  // The silent alarm of earlier releases: the new fleet's own calls, upstream traffic alone.
  [GUARDRAIL_MATH.silentWhileBaking]: (v) =>
    FILLED(v.baking) > 0 && FILLED(v.calls) - FILLED(v.refused) < 1 ? 1 : 0,
  [ENDPOINT_PROBER.silentWhileBaking]: (v) => (FILLED(v.baking) > 0 && FILLED(v.replies) < 1 ? 1 : 0),
};

/** What a metric of the template is, for the simulation. */
function sourceOf(where: string, metric: Record<string, unknown>): MetricSource {
  const name = String(metric.MetricName);
  const dimensions = JSON.stringify(metric.Dimensions ?? []);
  if (metric.Namespace === "AWS/SageMaker") {
    const green = dimensions.includes("EndpointConfigName");
    if (name === "Invocations") return green ? "greenCalls" : "variantCalls";
    if (name === "Invocation5XXErrors" && green) return "greenRefused";
    if (name === "ModelLatency") return green ? "greenLatency" : "variantLatency";
  }
  if (metric.Namespace === METRICS.namespace) {
    if (name === METRICS.follower.deploymentBaking) return "baking";
    if (name === METRICS.endpointFailures) return "endpointFailures";
    if (name === ENDPOINT_PROBER.metrics.replies) return "probeReplies";
  }
  throw new TemplateShapeError(
    where,
    "Metrics",
    `the deployment simulation does not produce ${String(metric.Namespace)} ${name}`,
  );
}

function statOf(where: string, stat: unknown): AlarmQuery["stat"] {
  if (stat === "Sum" || stat === "Average" || stat === "Maximum") return stat;
  throw new TemplateShapeError(where, "Stat", `the deployment simulation does not aggregate ${String(stat)}`);
}

/** One rollback alarm of the template. */
function readAlarm(alarm: TemplateResource): RollbackAlarm {
  const where = `AWS::CloudWatch::Alarm ${alarm.id}`;
  const p = alarm.properties;
  const comparison =
    p.ComparisonOperator === "GreaterThanThreshold"
      ? "above"
      : p.ComparisonOperator === "GreaterThanOrEqualToThreshold"
        ? "atOrAbove"
        : undefined;
  if (!comparison)
    throw new TemplateShapeError(where, "ComparisonOperator", `unsupported: ${String(p.ComparisonOperator)}`);
  let queries: AlarmQuery[];
  let value: RollbackAlarm["value"];
  if (Array.isArray(p.Metrics)) {
    const list = p.Metrics as { Id: string; Expression?: string; MetricStat?: Record<string, unknown> }[];
    const expression = list.find((q) => q.Expression)?.Expression;
    const evaluate = expression === undefined ? undefined : EXPRESSIONS[expression];
    if (!evaluate)
      throw new TemplateShapeError(
        where,
        "Metrics",
        `metric math the deployment simulation does not evaluate: ${expression}`,
      );
    value = evaluate;
    queries = list
      .filter((q) => q.MetricStat)
      .map((q) => ({
        id: q.Id,
        source: sourceOf(where, (q.MetricStat!.Metric ?? {}) as Record<string, unknown>),
        stat: statOf(where, q.MetricStat!.Stat),
        periodMinutes: Number(q.MetricStat!.Period) / 60,
      }));
  } else {
    queries = [
      {
        id: "m",
        source: sourceOf(where, p),
        stat: statOf(where, p.Statistic),
        periodMinutes: numberAt(alarm, "Period") / 60,
      },
    ];
    value = (v) => v.m;
  }
  const periods = numberAt(alarm, "EvaluationPeriods");
  return {
    name: String(p.AlarmName ?? alarm.id),
    queries,
    value,
    threshold: numberAt(alarm, "Threshold"),
    comparison,
    periods,
    datapoints: numberAt(alarm, "DatapointsToAlarm", periods),
    missingBreaches: p.TreatMissingData === "breaching",
  };
}

/** The deployment plan of the template's one real-time endpoint (the async lane's is left out). */
export function readDeploymentPlan(template: CfnTemplate): DeploymentPlan {
  const endpoints = template
    .ofType("AWS::SageMaker::Endpoint")
    .filter(
      (e) =>
        !template.follow(
          e,
          "EndpointConfigName",
          e.properties.EndpointConfigName,
          "AWS::SageMaker::EndpointConfig",
        ).properties.AsyncInferenceConfig,
    );
  if (endpoints.length !== 1)
    throw new TemplateShapeError(
      "template",
      "AWS::SageMaker::Endpoint",
      `expected one real-time endpoint, found ${endpoints.length}`,
    );
  const endpoint = endpoints[0]!;
  const base = "DeploymentConfig.BlueGreenUpdatePolicy";
  const routing = at(endpoint.properties, `${base}.TrafficRoutingConfiguration.Type`);
  const canary = routing === "CANARY";
  if (
    canary &&
    at(endpoint.properties, `${base}.TrafficRoutingConfiguration.CanarySize.Type`) !== "CAPACITY_PERCENT"
  )
    throw new TemplateShapeError(
      `AWS::SageMaker::Endpoint ${endpoint.id}`,
      "CanarySize.Type",
      "only CAPACITY_PERCENT is simulated",
    );
  const config = template.follow(
    endpoint,
    "EndpointConfigName",
    endpoint.properties.EndpointConfigName,
    "AWS::SageMaker::EndpointConfig",
  );
  const variant = {
    ...config,
    properties: (config.properties.ProductionVariants as Record<string, unknown>[])[0]!,
  };
  const names = (at(endpoint.properties, "DeploymentConfig.AutoRollbackConfiguration.Alarms") ?? []) as {
    AlarmName: unknown;
  }[];
  const alarms = names.map(({ AlarmName }) => {
    const found = template
      .ofType("AWS::CloudWatch::Alarm")
      .find((a) => a.properties.AlarmName === AlarmName || JSON.stringify(AlarmName).includes(`"${a.id}"`));
    if (!found)
      throw new TemplateShapeError(
        `AWS::SageMaker::Endpoint ${endpoint.id}`,
        "AutoRollbackConfiguration",
        `names an alarm not in this template: ${JSON.stringify(AlarmName)}`,
      );
    return readAlarm(found);
  });
  return {
    canaryShare: canary
      ? numberAt(endpoint, `${base}.TrafficRoutingConfiguration.CanarySize.Value`) / 100
      : undefined,
    canaryBakeSeconds: canary
      ? numberAt(endpoint, `${base}.TrafficRoutingConfiguration.WaitIntervalInSeconds`)
      : 0,
    bakeSeconds: numberAt(endpoint, `${base}.TerminationWaitInSeconds`, 0),
    startupSeconds: numberAt(variant, "ContainerStartupHealthCheckTimeoutInSeconds", 3600),
    alarms,
    prober: readProber(template),
  };
}
