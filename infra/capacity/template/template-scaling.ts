/**
 * The endpoint's Application Auto Scaling target and policies in a template: target tracking on a
 * predefined or customized metric, and step policies with the CloudWatch alarm that invokes each.
 * Both today's shape (invocations per instance) and newer ones (concurrent requests at high
 * resolution, a step policy on the queue's oldest message) read the same way.
 */
import { SCALING_MATH } from "../../../shared/domain/topology/endpoint.ts";
import { METRICS as PIPELINE_METRICS } from "../../../shared/domain/topology/metrics.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import { TemplateShapeError } from "../errors.ts";
import type { AlarmShape, EndpointShape, PolicyShape, ScalingMetric, StepShape } from "../shape.ts";
import {
  at,
  type CfnTemplate,
  numberAt,
  optionalNumberAt,
  referencedId,
  referencedIds,
  type TemplateResource,
} from "./template.ts";

const PREDEFINED: Record<string, { metric: ScalingMetric; periodSeconds: number }> = {
  SageMakerVariantInvocationsPerInstance: {
    metric: "invocationsPerInstance",
    periodSeconds: AWS_BEHAVIOUR.scaling.standardPeriodSeconds,
  },
  SageMakerVariantConcurrentRequestsPerModelHighResolution: {
    metric: "concurrentRequestsPerModel",
    periodSeconds: AWS_BEHAVIOUR.scaling.highResolutionPeriodSeconds,
  },
};

/** CloudWatch metrics the model can produce, by namespace and name. */
const METRICS: Record<string, ScalingMetric> = {
  "AWS/SageMaker InvocationsPerInstance": "invocationsPerInstance",
  "AWS/SageMaker ConcurrentRequestsPerModel": "concurrentRequestsPerModel",
  "AWS/SQS ApproximateAgeOfOldestMessage": "oldestMessageAge",
  "AWS/SQS ApproximateNumberOfMessagesVisible": "visibleMessages",
  // The decide function's oldest received item: the simulated queue's oldest age already counts
  // every item however often received, so the two read as one.
  [`${PIPELINE_METRICS.namespace} ${PIPELINE_METRICS.oldestItemAgeSeconds}`]: "oldestMessageAge",
  // The capacity follower's figure: (visible + in flight) ÷ instances asked for, once a minute.
  [`${PIPELINE_METRICS.namespace} ${PIPELINE_METRICS.follower.backlogPerInstance}`]: "backlogPerInstance",
};

const COMPARISONS: Record<string, AlarmShape["comparison"]> = {
  GreaterThanThreshold: "above",
  GreaterThanOrEqualToThreshold: "atOrAbove",
  LessThanThreshold: "below",
  LessThanOrEqualToThreshold: "atOrBelow",
};

/** The scaling counts and policies of `endpoint` (fixed at its initial count without a target). */
export function readScaling(
  template: CfnTemplate,
  endpoint: TemplateResource,
  shape: Pick<EndpointShape, "mode" | "minInstances" | "maxInstances">,
): { counts: { minInstances: number; maxInstances: number }; policies: PolicyShape[] } {
  // `endpoint/<name>/variant/<variant>`: the name by reference, or a named endpoint's literal name.
  const name = endpoint.properties.EndpointName;
  const targets = template
    .ofType("AWS::ApplicationAutoScaling::ScalableTarget")
    .filter((t) => t.properties.ServiceNamespace === "sagemaker")
    .filter(
      (t) =>
        referencedIds(t.properties.ResourceId).has(endpoint.id) ||
        (typeof name === "string" && JSON.stringify(t.properties.ResourceId).includes(`endpoint/${name}/`)),
    );
  const fixed = { minInstances: shape.minInstances, maxInstances: shape.maxInstances };
  if (targets.length === 0) return { counts: fixed, policies: [] };
  if (targets.length > 1)
    throw new TemplateShapeError(
      `AWS::SageMaker::Endpoint ${endpoint.id}`,
      "AWS::ApplicationAutoScaling::ScalableTarget",
      `expected one scalable target, found ${targets.length}`,
    );
  const target = targets[0]!;
  const policies = template
    .ofType("AWS::ApplicationAutoScaling::ScalingPolicy")
    .filter((p) => referencedId(p.properties.ScalingTargetId) === target.id)
    .map((p) => readPolicy(template, p));
  return {
    counts: { minInstances: numberAt(target, "MinCapacity"), maxInstances: numberAt(target, "MaxCapacity") },
    policies,
  };
}

function readPolicy(template: CfnTemplate, policy: TemplateResource): PolicyShape {
  const where = `AWS::ApplicationAutoScaling::ScalingPolicy ${policy.id}`;
  const name = String(policy.properties.PolicyName ?? policy.id);
  const cooldown = AWS_BEHAVIOUR.sageMaker.defaultCooldownSeconds;
  if (policy.properties.PolicyType === "TargetTrackingScaling") {
    const base = "TargetTrackingScalingPolicyConfiguration";
    const predefined = at(policy.properties, `${base}.PredefinedMetricSpecification.PredefinedMetricType`);
    const custom = at(policy.properties, `${base}.CustomizedMetricSpecification`);
    let metric: { metric: ScalingMetric; periodSeconds: number; cap?: number };
    if (typeof predefined === "string") {
      const known = PREDEFINED[predefined];
      if (!known)
        throw new TemplateShapeError(
          where,
          `${base}.PredefinedMetricSpecification.PredefinedMetricType`,
          `the capacity model does not simulate ${predefined}`,
        );
      metric = known;
    } else if (custom !== undefined) {
      metric = customMetric(where, `${base}.CustomizedMetricSpecification`, custom);
    } else throw new TemplateShapeError(where, `${base}`, "has neither a predefined nor a customized metric");
    return {
      kind: "target",
      name,
      ...metric,
      target: numberAt(policy, `${base}.TargetValue`),
      scaleOutCooldown: numberAt(policy, `${base}.ScaleOutCooldown`, cooldown),
      scaleInCooldown: numberAt(policy, `${base}.ScaleInCooldown`, cooldown),
      disableScaleIn: at(policy.properties, `${base}.DisableScaleIn`) === true,
    };
  }
  if (policy.properties.PolicyType === "StepScaling") {
    const base = "StepScalingPolicyConfiguration";
    const adjustmentType = at(policy.properties, `${base}.AdjustmentType`);
    if (
      adjustmentType !== "ChangeInCapacity" &&
      adjustmentType !== "PercentChangeInCapacity" &&
      adjustmentType !== "ExactCapacity"
    )
      throw new TemplateShapeError(where, `${base}.AdjustmentType`, `unknown or missing: ${adjustmentType}`);
    const steps = at(policy.properties, `${base}.StepAdjustments`);
    if (!Array.isArray(steps) || steps.length === 0)
      throw new TemplateShapeError(where, `${base}.StepAdjustments`, "is missing or empty");
    return {
      kind: "step",
      name,
      alarm: alarmOf(template, policy),
      adjustmentType,
      steps: steps.map((_, i): StepShape => {
        const step = `${base}.StepAdjustments.${i}`;
        return {
          lower: optionalNumberAt(policy, `${step}.MetricIntervalLowerBound`),
          upper: optionalNumberAt(policy, `${step}.MetricIntervalUpperBound`),
          adjustment: numberAt(policy, `${step}.ScalingAdjustment`),
        };
      }),
      cooldown: numberAt(policy, `${base}.Cooldown`, cooldown),
    };
  }
  throw new TemplateShapeError(where, "PolicyType", `unknown: ${String(policy.properties.PolicyType)}`);
}

/** A customized metric: one namespace and name the model produces, or the capped work metric. */
function customMetric(
  where: string,
  path: string,
  spec: unknown,
): { metric: ScalingMetric; periodSeconds: number; cap?: number } {
  const s = spec as { Namespace?: unknown; MetricName?: unknown; Metrics?: unknown };
  const period = AWS_BEHAVIOUR.scaling.standardPeriodSeconds;
  if (Array.isArray(s.Metrics)) {
    // Metric math: the one form understood is a metric the model produces, read no higher than a cap.
    const returned = (s.Metrics as { Expression?: unknown; ReturnData?: unknown }[]).filter(
      (q) => q.ReturnData !== false && typeof q.Expression === "string",
    );
    const capped = /^IF\((\w+) > ([\d.]+), ([\d.]+), (\w+)\)$/.exec(String(returned[0]?.Expression));
    const stats = (s.Metrics as { Id?: unknown; MetricStat?: { Metric?: unknown } }[]).filter(
      (q) => q.MetricStat && q.Id === capped?.[1],
    );
    if (
      returned.length === 1 &&
      capped &&
      capped[1] === capped[4] &&
      capped[2] === capped[3] &&
      stats.length === 1
    ) {
      const metric = alarmMetric(where, (stats[0]!.MetricStat!.Metric ?? {}) as Record<string, unknown>);
      return { metric, periodSeconds: period, cap: Number(capped[2]) };
    }
    throw new TemplateShapeError(
      where,
      `${path}.Metrics`,
      "metric math the capacity model does not simulate",
    );
  }
  const metric = METRICS[`${String(s.Namespace)} ${String(s.MetricName)}`];
  if (!metric)
    throw new TemplateShapeError(
      where,
      `${path}.MetricName`,
      `the capacity model does not simulate ${String(s.Namespace)} ${String(s.MetricName)}`,
    );
  return { metric, periodSeconds: period };
}

/** The alarm whose actions invoke step policy `policy`. */
function alarmOf(template: CfnTemplate, policy: TemplateResource): AlarmShape {
  const alarms = template
    .ofType("AWS::CloudWatch::Alarm")
    .filter((a) => Array.isArray(a.properties.AlarmActions))
    .filter((a) => (a.properties.AlarmActions as unknown[]).some((x) => referencedId(x) === policy.id));
  if (alarms.length !== 1)
    throw new TemplateShapeError(
      `AWS::ApplicationAutoScaling::ScalingPolicy ${policy.id}`,
      "AlarmActions",
      `expected one AWS::CloudWatch::Alarm invoking this step policy, found ${alarms.length}`,
    );
  const alarm = alarms[0]!;
  const where = `AWS::CloudWatch::Alarm ${alarm.id}`;
  const { metric, periodSeconds } =
    alarm.properties.Metrics === undefined
      ? { metric: alarmMetric(where, alarm.properties), periodSeconds: numberAt(alarm, "Period") }
      : maximumOf(where, alarm.properties.Metrics);
  const comparison = COMPARISONS[String(alarm.properties.ComparisonOperator)];
  if (!comparison)
    throw new TemplateShapeError(
      where,
      "ComparisonOperator",
      `unknown or missing: ${String(alarm.properties.ComparisonOperator)}`,
    );
  const evaluationPeriods = numberAt(alarm, "EvaluationPeriods");
  return {
    metric,
    threshold: numberAt(alarm, "Threshold"),
    comparison,
    periodSeconds,
    evaluationPeriods,
    datapointsToAlarm: numberAt(alarm, "DatapointsToAlarm", evaluationPeriods),
  };
}

/** The metric of an alarm on one metric (its Namespace and MetricName). */
function alarmMetric(where: string, spec: { Namespace?: unknown; MetricName?: unknown }): ScalingMetric {
  const name = `${String(spec.Namespace)} ${String(spec.MetricName)}`;
  const metric = METRICS[name];
  if (!metric)
    throw new TemplateShapeError(where, "MetricName", `the capacity model does not simulate ${name}`);
  return metric;
}

/**
 * An alarm's metric math: the forms understood are the scale-in guard (`SCALING_MATH`) and the
 * maximum (`MAX([...])`, `FILL` allowed) of metrics that all read as one the model produces, over
 * one period.
 */
function maximumOf(where: string, queries: unknown): { metric: ScalingMetric; periodSeconds: number } {
  const list = (Array.isArray(queries) ? queries : []) as {
    Expression?: unknown;
    ReturnData?: unknown;
    MetricStat?: { Metric?: { Namespace?: unknown; MetricName?: unknown }; Period?: unknown };
  }[];
  const returned = list.filter((q) => q.ReturnData !== false && typeof q.Expression === "string");
  const stats = list.flatMap((q) => (q.MetricStat ? [q.MetricStat] : []));
  // The scale-in guard: the work metric as it would read with one instance fewer.
  if (returned.length === 1 && returned[0]!.Expression === SCALING_MATH.workWithOneFewer) {
    const periods = new Set(stats.map((stat) => stat.Period));
    const [period] = periods;
    if (periods.size === 1 && typeof period === "number")
      return { metric: "concurrentRequestsWithOneFewer", periodSeconds: period };
  }
  if (returned.length !== 1 || !/^MAX\(\[/.test(String(returned[0]!.Expression)) || stats.length === 0)
    throw new TemplateShapeError(where, "Metrics", "metric math the capacity model does not simulate");
  const metrics = new Set(stats.map((stat) => alarmMetric(where, stat.Metric ?? {})));
  const periods = new Set(stats.map((stat) => stat.Period));
  const [metric] = metrics;
  const [period] = periods;
  if (metrics.size !== 1 || periods.size !== 1 || typeof period !== "number")
    throw new TemplateShapeError(where, "Metrics", "a maximum of different metrics or periods");
  return { metric: metric!, periodSeconds: period };
}
