/**
 * The endpoint as deployed, read from the template JSON: it scales on the work it is given
 * (concurrent requests per instance, a target an instance reaches below saturation, a backlog
 * step as safety net, quick scale-out and slow scale-in), between the minimum and maximum asked for.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import measured from "../../shared/domain/topology/measured-times.json" with { type: "json" };
import {
  DECIDE_FUNCTION,
  ENDPOINT_DEPLOYMENT,
  ENDPOINT_SCALING,
  METRICS,
  ON_CALL_ALARMS,
} from "../../shared/domain/topology.ts";
import { readsOldestItemAge } from "../helpers/alarm-metrics.ts";
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
  it("tracks concurrent requests per instance at a target an instance reaches below saturation", () => {
    const policies = ofType("AWS::ApplicationAutoScaling::ScalingPolicy").map(([, p]) => p.Properties);
    const tracking = policies.find((p) => p.PolicyType === "TargetTrackingScaling")!
      .TargetTrackingScalingPolicyConfiguration as {
      PredefinedMetricSpecification: { PredefinedMetricType: string };
      TargetValue: number;
      ScaleOutCooldown: number;
      ScaleInCooldown: number;
    };
    expect(tracking.PredefinedMetricSpecification.PredefinedMetricType).toBe(
      "SageMakerVariantConcurrentRequestsPerModelHighResolution",
    );
    expect(tracking.ScaleOutCooldown).toBeLessThanOrEqual(60);
    expect(tracking.ScaleInCooldown).toBeGreaterThanOrEqual(300);
    expect(tracking.ScaleInCooldown).toBeLessThanOrEqual(600);

    // One request is one batch of items, evaluated one at a time; the deadline is the container's own.
    const target = tracking.TargetValue;
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

    // And the decide function can put that many requests in flight on every instance.
    const [, scalable] = ofType("AWS::ApplicationAutoScaling::ScalableTarget")[0]!;
    const inFlight = ofType("AWS::Lambda::EventSourceMapping")
      .map(
        ([, m]) =>
          (m.Properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency,
      )
      .reduce<number>((sum, n) => sum + (n ?? 0), 0);
    expect(inFlight).toBeGreaterThanOrEqual(target * (scalable.Properties.MaxCapacity as number));
  });

  it("adds instances, one then two, when the intake's oldest message waits, and never removes any that way", () => {
    const [[id, step]] = ofType("AWS::ApplicationAutoScaling::ScalingPolicy").filter(
      ([, p]) => p.Properties.PolicyType === "StepScaling",
    ) as [[string, Resource]];
    const config = step.Properties.StepScalingPolicyConfiguration as {
      AdjustmentType: string;
      Cooldown: number;
      StepAdjustments: { ScalingAdjustment: number }[];
    };
    expect(config.AdjustmentType).toBe("ChangeInCapacity");
    expect(config.Cooldown).toBeLessThanOrEqual(60);
    expect(config.StepAdjustments.map((s) => s.ScalingAdjustment)).toEqual([1, 2]);
    const [, alarm] = ofType("AWS::CloudWatch::Alarm").find(([, a]) =>
      JSON.stringify(a.Properties.AlarmActions).includes(id),
    )!;
    expect(alarm.Properties.Threshold).toBe(ENDPOINT_SCALING.backlogStepSeconds.addOne);
    // The larger of SQS's age (which leaves out items received three times or more: the ones the
    // overload backoff keeps returning) and the oldest age the decide function received.
    const intake = Object.keys(resources).find((r) => /^PipelineIntakeQueue[0-9A-F]{8}$/.test(r))!;
    expect(readsOldestItemAge(alarm.Properties, intake, "intake")).toBe(true);
    const periods = (alarm.Properties.Metrics as { MetricStat?: { Period: number } }[]).flatMap((q) =>
      q.MetricStat ? [q.MetricStat.Period] : [],
    );
    expect(periods).toEqual([ENDPOINT_SCALING.backlogPeriodSeconds, ENDPOINT_SCALING.backlogPeriodSeconds]);
    // Any of the last minutes over a step holds it: an item in backoff is measured only when it
    // is received again, so a single quiet minute must not stop the scale-out.
    expect(alarm.Properties.EvaluationPeriods).toBe(ENDPOINT_SCALING.backlogLookbackPeriods);
    expect(alarm.Properties.DatapointsToAlarm).toBe(1);
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
  it("retains the instance count scaling reached, and rolls a deployment back on the endpoint error alarm", () => {
    const [, endpoint] = ofType("AWS::SageMaker::Endpoint")[0]!;
    expect(endpoint.Properties.RetainAllVariantProperties).toBe(true);
    const deployment = endpoint.Properties.DeploymentConfig as {
      BlueGreenUpdatePolicy: {
        TerminationWaitInSeconds: number;
        TrafficRoutingConfiguration: { Type: string };
      };
      AutoRollbackConfiguration: { Alarms: { AlarmName: { Ref: string } }[] };
    };
    expect(deployment.BlueGreenUpdatePolicy.TrafficRoutingConfiguration.Type).toBe("ALL_AT_ONCE");
    const [rollback] = deployment.AutoRollbackConfiguration.Alarms;
    const alarm = resources[rollback!.AlarmName.Ref]!;
    expect(alarm.Type).toBe("AWS::CloudWatch::Alarm");
    // Not SageMaker's Invocation5XXErrors, which counts the container's deliberate 503 queue_full
    // answers: a busy hour would roll back a good deployment. The decide function's count of
    // failures other than overload refusals (a container answering 500 to everything raises it).
    expect(alarm.Properties).toMatchObject({
      Namespace: METRICS.namespace,
      MetricName: METRICS.endpointFailures,
      Dimensions: [{ Name: "service", Value: METRICS.service.decide }],
      Statistic: "Sum",
      Threshold: 0,
      TreatMissingData: "notBreaching",
      // One-minute periods, 2 of 5 with failures: it can fire well inside the baking period,
      // where 2 consecutive 5-minute periods plus the metric's delay could outlast a 12-minute bake.
      Period: ON_CALL_ALARMS.endpointFailures.periodSeconds,
      EvaluationPeriods: ON_CALL_ALARMS.endpointFailures.evaluationPeriods,
      DatapointsToAlarm: ON_CALL_ALARMS.endpointFailures.datapointsToAlarm,
    });
    // The old fleet is kept until the alarm has had its whole window to fire, and the metric its
    // time to arrive.
    const window = (alarm.Properties.EvaluationPeriods as number) * (alarm.Properties.Period as number);
    const baking = deployment.BlueGreenUpdatePolicy.TerminationWaitInSeconds;
    expect(baking).toBeGreaterThanOrEqual(window);
    expect(baking).toBeGreaterThanOrEqual(ENDPOINT_DEPLOYMENT.minimumBakingSeconds);
    // SageMaker reads the alarm with the endpoint's execution role, which must allow it.
    const roleId = (endpointConfigRole() ?? "") as string;
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(roleId))
      .flatMap(
        ([, p]) =>
          (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Action: "cloudwatch:DescribeAlarms",
        Resource: { "Fn::GetAtt": [rollback!.AlarmName.Ref, "Arn"] },
      }),
    );
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
