/**
 * Reads the async lane from a synthesized template, as the capacity model needs it: the async
 * endpoint (the endpoint configuration with `AsyncInferenceConfig`: instance type, objects per
 * instance), its scalable target (minimum, maximum), its target tracking on the backlog per
 * instance (target, cooldowns), its wake-up step policy and the alarm that drives it
 * (HasBacklogWithoutCapacity: period, evaluation, cooldown, step), and the submit function's event
 * source (items per object, batching window, concurrency). A template without an async endpoint
 * (`-c batchLane=realtime`) has no async lane: an error says so.
 */
import { AWS_BEHAVIOUR } from "./aws-behaviour.ts";
import { TemplateShapeError } from "./errors.ts";
import {
  at,
  CfnTemplate,
  numberAt,
  referencedId,
  referencedIds,
  type TemplateResource,
} from "./template/template.ts";

/** The async lane's shape. */
export interface AsyncShape {
  readonly endpointName: string;
  readonly instanceType: string;
  readonly minInstances: number;
  readonly maxInstances: number;
  /** Objects one instance runs at once. */
  readonly concurrentPerInstance: number;
  /** Target tracking: objects per instance, and its cooldowns (s). */
  readonly backlogTarget: number;
  readonly scaleOutCooldownSeconds: number;
  readonly scaleInCooldownSeconds: number;
  /** The wake-up from zero: the alarm's period and evaluation, the policy's step and cooldown; undefined without one. */
  readonly wakeUp:
    | {
        readonly periodSeconds: number;
        readonly evaluationPeriods: number;
        readonly step: number;
        readonly cooldownSeconds: number;
      }
    | undefined;
  /** The submit function's event source: items per object, how long it gathers, how many at once. */
  readonly itemsPerObject: number;
  readonly batchingWindowSeconds: number;
  readonly submitConcurrency: number;
}

/**
 * Whether the template's live intake runs on the async endpoint (`-c endpointMode=async`): a
 * function reads the intake as an async lane (INTAKE_QUEUE_ARN), and none calls a real-time one.
 * Such a template has no live lane for `--rate` to simulate: its items are objects like a batch's.
 */
export function liveLaneIsAsync(json: unknown): boolean {
  const functions = new CfnTemplate(json).ofType("AWS::Lambda::Function");
  const has = (name: string) =>
    functions.some((f) => at(f.properties, `Environment.Variables.${name}`) !== undefined);
  return has("INTAKE_QUEUE_ARN") && !has("DECISION_ENDPOINT_NAME");
}

/** The endpoint configuration with AsyncInferenceConfig, and its endpoint. */
function asyncEndpoint(template: CfnTemplate): { config: TemplateResource; endpoint: TemplateResource } {
  const configs = template
    .ofType("AWS::SageMaker::EndpointConfig")
    .filter((c) => c.properties.AsyncInferenceConfig);
  if (configs.length !== 1)
    throw new TemplateShapeError(
      "template",
      "AWS::SageMaker::EndpointConfig",
      configs.length === 0
        ? "no endpoint configuration with AsyncInferenceConfig: this stack's batch lane is real-time (-c batchLane=realtime); simulate it with --rate"
        : `${configs.length} async endpoint configurations; the model reads one`,
    );
  const config = configs[0]!;
  const endpoint = template
    .ofType("AWS::SageMaker::Endpoint")
    .find((e) => referencedId(e.properties.EndpointConfigName) === config.id);
  if (!endpoint)
    throw new TemplateShapeError(
      config.id,
      "AWS::SageMaker::Endpoint",
      "no endpoint uses this configuration",
    );
  return { config, endpoint };
}

/** The scalable target whose resource id names `endpointName`, and its policies. */
function scalingOf(template: CfnTemplate, endpointName: string) {
  const target = template
    .ofType("AWS::ApplicationAutoScaling::ScalableTarget")
    .find((t) => JSON.stringify(t.properties.ResourceId).includes(`endpoint/${endpointName}/`));
  if (!target)
    throw new TemplateShapeError(
      endpointName,
      "AWS::ApplicationAutoScaling::ScalableTarget",
      "the async endpoint has no scalable target",
    );
  const policies = template
    .ofType("AWS::ApplicationAutoScaling::ScalingPolicy")
    .filter((p) => referencedId(p.properties.ScalingTargetId) === target.id);
  return { target, policies };
}

/** The target tracking policy on ApproximateBacklogSizePerInstance. */
function trackingOf(policies: readonly TemplateResource[]) {
  const tracking = policies.find(
    (p) =>
      at(
        p.properties,
        "TargetTrackingScalingPolicyConfiguration.CustomizedMetricSpecification.MetricName",
      ) === "ApproximateBacklogSizePerInstance",
  );
  if (!tracking)
    throw new TemplateShapeError(
      "async scalable target",
      "TargetTrackingScalingPolicyConfiguration",
      "no target tracking on ApproximateBacklogSizePerInstance",
    );
  const fallback = AWS_BEHAVIOUR.sageMaker.defaultCooldownSeconds;
  return {
    backlogTarget: numberAt(tracking, "TargetTrackingScalingPolicyConfiguration.TargetValue"),
    scaleOutCooldownSeconds: numberAt(
      tracking,
      "TargetTrackingScalingPolicyConfiguration.ScaleOutCooldown",
      fallback,
    ),
    scaleInCooldownSeconds: numberAt(
      tracking,
      "TargetTrackingScalingPolicyConfiguration.ScaleInCooldown",
      fallback,
    ),
  };
}

/** The step policy an alarm on HasBacklogWithoutCapacity drives, with that alarm's evaluation. */
function wakeUpOf(template: CfnTemplate, policies: readonly TemplateResource[]): AsyncShape["wakeUp"] {
  for (const alarm of template.ofType("AWS::CloudWatch::Alarm")) {
    if (alarm.properties.MetricName !== "HasBacklogWithoutCapacity") continue;
    const actions = referencedIds(alarm.properties.AlarmActions);
    const policy = policies.find((p) => actions.has(p.id) && p.properties.PolicyType === "StepScaling");
    if (!policy) continue;
    const steps = (at(policy.properties, "StepScalingPolicyConfiguration.StepAdjustments") ?? []) as {
      ScalingAdjustment?: number;
    }[];
    return {
      periodSeconds: numberAt(alarm, "Period"),
      evaluationPeriods: numberAt(alarm, "EvaluationPeriods"),
      step: Math.max(0, ...steps.map((s) => Number(s.ScalingAdjustment ?? 0))),
      cooldownSeconds: numberAt(
        policy,
        "StepScalingPolicyConfiguration.Cooldown",
        AWS_BEHAVIOUR.sageMaker.defaultCooldownSeconds,
      ),
    };
  }
  return undefined;
}

/** The submit function's event source: the function that may InvokeEndpointAsync, and its mapping. */
function submitOf(template: CfnTemplate, endpoint: TemplateResource) {
  const fn = template.ofType("AWS::Lambda::Function").find((f) => {
    const env = at(f.properties, "Environment.Variables") as Record<string, unknown> | undefined;
    return (
      env?.ASYNC_ENDPOINT_NAME !== undefined &&
      template
        .ofType("AWS::Lambda::EventSourceMapping")
        .some(
          (m) => referencedId(m.properties.FunctionName) === f.id && Number(m.properties.BatchSize ?? 0) > 1,
        )
    );
  });
  const mapping =
    fn &&
    template
      .ofType("AWS::Lambda::EventSourceMapping")
      .find((m) => referencedId(m.properties.FunctionName) === fn.id);
  if (!mapping)
    throw new TemplateShapeError(
      endpoint.id,
      "AWS::Lambda::EventSourceMapping",
      "no submit function feeds the async endpoint",
    );
  return {
    itemsPerObject: numberAt(mapping, "BatchSize"),
    batchingWindowSeconds: numberAt(mapping, "MaximumBatchingWindowInSeconds", 0),
    submitConcurrency: numberAt(
      mapping,
      "ScalingConfig.MaximumConcurrency",
      AWS_BEHAVIOUR.lambda.initialConcurrency,
    ),
  };
}

/** The async lane's shape from a parsed template. */
export function readAsyncShape(json: unknown): AsyncShape {
  const template = new CfnTemplate(json);
  const { config, endpoint } = asyncEndpoint(template);
  const endpointName = endpoint.properties.EndpointName;
  if (typeof endpointName !== "string")
    throw new TemplateShapeError(
      endpoint.id,
      "EndpointName",
      "must be a literal name (the scaling target's resource id names it)",
    );
  const variant = at(config.properties, "ProductionVariants.0") as Record<string, unknown> | undefined;
  if (typeof variant?.InstanceType !== "string")
    throw new TemplateShapeError(
      config.id,
      "ProductionVariants.0.InstanceType",
      "must be a literal instance type",
    );
  const { target, policies } = scalingOf(template, endpointName);
  return {
    endpointName,
    instanceType: variant.InstanceType,
    minInstances: numberAt(target, "MinCapacity"),
    maxInstances: numberAt(target, "MaxCapacity"),
    concurrentPerInstance: numberAt(
      config,
      "AsyncInferenceConfig.ClientConfig.MaxConcurrentInvocationsPerInstance",
      1,
    ),
    ...trackingOf(policies),
    wakeUp: wakeUpOf(template, policies),
    ...submitOf(template, endpoint),
  };
}
