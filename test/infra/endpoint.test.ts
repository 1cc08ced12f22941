/**
 * The endpoint as deployed, read from the template JSON: it scales on the work it is given
 * (concurrent requests per instance at a target an instance reaches below saturation, capped;
 * the capacity follower's backlog per instance), adds instances on target tracking only and
 * removes them with a guard, between the minimum and maximum asked for.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import measured from "../../shared/domain/topology/measured-times.json" with { type: "json" };
import { ENDPOINT_PROBER } from "../../shared/domain/topology/prober.ts";
import {
  DECIDE_FUNCTION,
  ENDPOINT_DEPLOYMENT,
  ENDPOINT_SCALING,
  GUARDRAIL_MATH,
  METRICS,
  SCALING_MATH,
} from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
let resources: Record<string, Resource>;

beforeAll(() => {
  resources = Template.fromStack(synthStack()).toJSON().Resources;
}, 120_000);

const ofType = (type: string, within: Record<string, Resource> = resources) =>
  Object.entries(within).filter(([, r]) => r.Type === type);

/** The logical id of the role the SageMaker model runs under (its ExecutionRoleArn). */
function endpointConfigRole(): string | undefined {
  const [, model] = ofType("AWS::SageMaker::Model")[0]!;
  return (model.Properties.ExecutionRoleArn as { "Fn::GetAtt"?: string[] })["Fn::GetAtt"]?.[0];
}

describe("scaling on the work", () => {
  // The real-time endpoint's policies (the async lane's endpoint scales on its own backlog).
  const policies = () =>
    ofType("AWS::ApplicationAutoScaling::ScalingPolicy")
      .filter(([, p]) => JSON.stringify(p.Properties.ScalingTargetId).startsWith('{"Ref":"EndpointScaling'))
      .map(([id, p]) => ({ id, ...p.Properties })) as {
      id: string;
      PolicyType: string;
      TargetTrackingScalingPolicyConfiguration?: {
        CustomizedMetricSpecification: {
          Metrics?: { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }[];
          MetricName?: string;
          Dimensions?: { Name: string; Value: string }[];
        };
        TargetValue: number;
        ScaleOutCooldown: number;
        DisableScaleIn: boolean;
      };
      StepScalingPolicyConfiguration?: {
        AdjustmentType: string;
        Cooldown: number;
        StepAdjustments: { ScalingAdjustment: number; MetricIntervalUpperBound?: number }[];
      };
    }[];

  it("only adds instances on target tracking: concurrent requests (capped) and the follower's backlog per instance", () => {
    const tracking = policies().filter((p) => p.PolicyType === "TargetTrackingScaling");
    expect(tracking).toHaveLength(2);
    for (const p of tracking) {
      const config = p.TargetTrackingScalingPolicyConfiguration!;
      // Scale-in is the guard's alone; a scale-out waits about an instance's start before the next.
      expect(config.DisableScaleIn).toBe(true);
      expect(config.ScaleOutCooldown).toBeGreaterThanOrEqual(ENDPOINT_SCALING.scaleOutCooldownSeconds);
    }
    const work = tracking.find(
      (p) => p.TargetTrackingScalingPolicyConfiguration!.CustomizedMetricSpecification.Metrics,
    )!;
    const metrics = work.TargetTrackingScalingPolicyConfiguration!.CustomizedMetricSpecification.Metrics!;
    expect(metrics.find((m) => m.MetricStat)?.MetricStat?.Metric.MetricName).toBe(
      "ConcurrentRequestsPerModel",
    );
    const target = work.TargetTrackingScalingPolicyConfiguration!.TargetValue;
    // One scale-out adds at most workStep of the fleet: the metric is read no higher than that.
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(
      SCALING_MATH.cappedWork(Math.round(target * ENDPOINT_SCALING.workStep * 100) / 100),
    );

    // One request is one batch of items, evaluated one at a time; the deadline is the container's own.
    const service = DECIDE_FUNCTION.endpointBatchItems * measured.secondsPerItem.fresh;
    const model = ofType("AWS::SageMaker::Model")[0]![1].Properties as {
      PrimaryContainer: { Environment: Record<string, string> };
    };
    const deadline = Number(model.PrimaryContainer.Environment.DECIDE_DEADLINE_MS) / 1000;
    expect(target).toBeGreaterThan(0);
    expect(target).toBeLessThan(ENDPOINT_SCALING.requestsServedAtOnce);
    // At the target, an average request (M/D/1 queueing) finishes within the deadline.
    const meanResponse = (target * service) / (2 * (1 - target)) + service;
    expect(meanResponse).toBeLessThanOrEqual(deadline);

    const backlog = tracking.find((p) => p !== work)!.TargetTrackingScalingPolicyConfiguration!;
    expect(backlog.CustomizedMetricSpecification).toMatchObject({
      MetricName: METRICS.follower.backlogPerInstance,
      Dimensions: [{ Name: "service", Value: METRICS.service.capacityFollower }],
    });
    expect(backlog.TargetValue * measured.secondsPerItem.fresh).toBeLessThanOrEqual(
      ENDPOINT_SCALING.backlogSeconds,
    );
  });

  it("fires on no age: no policy's alarm reads the oldest item, which an overload backoff inflates", () => {
    const stepIds = policies()
      .filter((p) => p.PolicyType === "StepScaling")
      .map((p) => p.id);
    const stepAlarms = ofType("AWS::CloudWatch::Alarm").filter(([, a]) =>
      stepIds.some((id) => JSON.stringify(a.Properties.AlarmActions ?? []).includes(id)),
    );
    expect(stepAlarms.length).toBe(1);
    const text = JSON.stringify(stepAlarms[0]![1].Properties);
    expect(text).not.toMatch(/ApproximateAgeOfOldestMessage|oldest_item_age/);
  });

  it("removes instances one step at a time, only while those left stay under the target", () => {
    const [step] = policies().filter((p) => p.PolicyType === "StepScaling");
    const config = step!.StepScalingPolicyConfiguration!;
    expect(config.AdjustmentType).toBe("PercentChangeInCapacity");
    expect(config.StepAdjustments.every((s) => s.ScalingAdjustment < 0)).toBe(true);
    expect(config.Cooldown).toBeGreaterThanOrEqual(ENDPOINT_SCALING.scaleInCooldownSeconds);
    const [, alarm] = ofType("AWS::CloudWatch::Alarm").find(([, a]) =>
      JSON.stringify(a.Properties.AlarmActions ?? []).includes(step!.id),
    )!;
    expect(alarm.Properties).toMatchObject({
      ComparisonOperator: "LessThanOrEqualToThreshold",
      EvaluationPeriods: ENDPOINT_SCALING.scaleInMinutes,
      DatapointsToAlarm: ENDPOINT_SCALING.scaleInMinutes,
    });
    const queries = alarm.Properties.Metrics as { Expression?: string }[];
    expect(queries.find((q) => q.Expression)?.Expression).toBe(SCALING_MATH.workWithOneFewer);
  });

  it("scales between the minimum and maximum asked for, and refuses a maximum under the minimum", () => {
    const sized = Template.fromStack(synthStack({ initialInstanceCount: 2, maxInstanceCount: 8 }));
    sized.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", {
      MinCapacity: 2,
      MaxCapacity: 8,
    });
    expect(() => synthStack({ initialInstanceCount: 3, maxInstanceCount: 2 })).toThrow(
      /maximum instance count must be an integer of at least the minimum \(3\), got 2/,
    );
  });
});

describe("deploys that keep capacity", () => {
  it("retains the instance count scaling reached, shifts traffic by canary, and rolls back on the new fleet's own metrics", () => {
    const [endpointId, endpoint] = ofType("AWS::SageMaker::Endpoint")[0]!;
    expect(endpoint.Properties.RetainAllVariantProperties).toBe(true);
    const deployment = endpoint.Properties.DeploymentConfig as {
      BlueGreenUpdatePolicy: {
        TerminationWaitInSeconds: number;
        TrafficRoutingConfiguration: {
          Type: string;
          CanarySize: { Type: string; Value: number };
          WaitIntervalInSeconds: number;
        };
      };
      AutoRollbackConfiguration: { Alarms: { AlarmName: string }[] };
    };
    const routing = deployment.BlueGreenUpdatePolicy.TrafficRoutingConfiguration;
    expect(routing).toMatchObject({
      Type: "CANARY",
      CanarySize: { Type: "CAPACITY_PERCENT", Value: ENDPOINT_DEPLOYMENT.canaryCapacityPercent },
    });
    const byName = (name: string) =>
      ofType("AWS::CloudWatch::Alarm").find(([, a]) => a.Properties.AlarmName === name)!;
    const alarms = deployment.AutoRollbackConfiguration.Alarms.map((a) => byName(a.AlarmName));
    expect(alarms).toHaveLength(4);
    // The new fleet's own metrics: SageMaker's, on the new configuration's name.
    const [, config] = ofType("AWS::SageMaker::EndpointConfig")[0]!;
    const configId = Object.entries(resources).find(([, r]) => r === config)![0];
    const onNewFleet = alarms.filter(([, a]) =>
      JSON.stringify(a.Properties.Metrics ?? []).includes(configId),
    );
    const expressions = onNewFleet.map(
      ([, a]) => (a.Properties.Metrics as { Expression?: string }[]).find((m) => m.Expression)!.Expression,
    );
    expect(expressions.sort()).toEqual(
      [GUARDRAIL_MATH.refusedShare, GUARDRAIL_MATH.slowerThanVariant].sort(),
    );
    // And the endpoint prober's replies while the new fleet bakes (the silent alarm, issue 42).
    const silent = alarms.filter(([, a]) =>
      JSON.stringify(a.Properties.Metrics ?? []).includes(JSON.stringify(ENDPOINT_PROBER.silentWhileBaking)),
    );
    expect(silent).toHaveLength(1);
    // The decide function's endpoint failures (500s, model errors, timeouts) still roll back.
    expect(alarms.map(([, a]) => a.Properties.MetricName)).toContain(METRICS.endpointFailures);
    // The alarms are updated to the new configuration before the endpoint deploys it.
    const dependsOn = (endpoint as unknown as { DependsOn?: string[] }).DependsOn ?? [];
    for (const [id] of alarms) expect(dependsOn, id).toContain(id);
    // Each stage bakes for every alarm's whole window and the metric's delay.
    for (const [, a] of alarms) {
      const queries = (a.Properties.Metrics ?? []) as { MetricStat?: { Period: number } }[];
      const period = queries.find((q) => q.MetricStat)?.MetricStat?.Period ?? (a.Properties.Period as number);
      const window = (a.Properties.EvaluationPeriods as number) * period;
      expect(routing.WaitIntervalInSeconds).toBeGreaterThanOrEqual(window);
      expect(deployment.BlueGreenUpdatePolicy.TerminationWaitInSeconds).toBeGreaterThanOrEqual(window);
    }
    expect(deployment.BlueGreenUpdatePolicy.TerminationWaitInSeconds).toBeGreaterThanOrEqual(
      ENDPOINT_DEPLOYMENT.minimumBakingSeconds,
    );
    // SageMaker reads the alarms with the endpoint's execution role, which must allow it.
    const roleId = (endpointConfigRole() ?? "") as string;
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(roleId))
      .flatMap(
        ([, p]) =>
          (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      );
    const describe = statements.find((st) => st.Action === "cloudwatch:DescribeAlarms")!;
    for (const name of deployment.AutoRollbackConfiguration.Alarms.map((a) => a.AlarmName))
      expect(JSON.stringify(describe.Resource), name).toContain(`:alarm:${name}`);
    expect(endpointId).toBeDefined();
  });

  it("makes a new instance type a new endpoint with its own scaling, never an in-place change of a scaled variant", () => {
    const shape = (props: Parameters<typeof synthStack>[0]) => {
      const r = Template.fromStack(synthStack(props)).toJSON().Resources as Record<string, Resource>;
      const [, endpoint] = ofType("AWS::SageMaker::Endpoint", r)[0]!;
      const [, config] = ofType("AWS::SageMaker::EndpointConfig", r)[0]!;
      const variant = (
        config.Properties.ProductionVariants as { VariantName: string; InstanceType: string }[]
      )[0]!;
      const [targetId, target] = ofType("AWS::ApplicationAutoScaling::ScalableTarget", r)[0]!;
      return {
        name: endpoint.Properties.EndpointName as string,
        variant: variant.VariantName,
        type: variant.InstanceType,
        resourceId: target.Properties.ResourceId,
        scalingIds: [targetId, ...ofType("AWS::ApplicationAutoScaling::ScalingPolicy", r).map(([id]) => id)],
      };
    };
    const small = shape({});
    const large = shape({ instanceType: "ml.c6i.2xlarge" });
    const rebuilt = shape({ imageUri: "123456789012.dkr.ecr.us-east-1.amazonaws.com/decide:2" });
    expect(small).toMatchObject({ variant: "ml-c6i-xlarge", type: "ml.c6i.xlarge" });
    expect(large).toMatchObject({ variant: "ml-c6i-2xlarge", type: "ml.c6i.2xlarge" });
    for (const s of [small, large]) expect(s.resourceId).toBe(`endpoint/${s.name}/variant/${s.variant}`);
    // EndpointName requires replacement: a new endpoint, new scaling resources (their names are fixed).
    expect(large.name).not.toBe(small.name);
    for (const id of large.scalingIds) expect(small.scalingIds).not.toContain(id);
    // A new image keeps the endpoint, its variant and its scaling: an in-place, blue/green update.
    expect(rebuilt).toEqual(small);
  });
});
