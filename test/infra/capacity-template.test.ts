/**
 * The capacity model's template reader: it reads today's shape and the newer ones (target
 * tracking on concurrent requests at high resolution, a step policy with the alarm that invokes
 * it, on one metric or on the oldest item's age expression, a routing strategy, the container's
 * queue), reads the stack as synthesized now, and names
 * the resource and property whenever something it needs is missing or not a literal.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { TemplateShapeError } from "../../infra/capacity/errors.ts";
import { readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Json = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
const containerDefaults = { queueSize: 16, deadlineSeconds: 60 };
const baseline = (): Json =>
  JSON.parse(readFileSync(join(REPO_ROOT, "test", "fixtures", "capacity-baseline.template.json"), "utf8"));
const read = (json: Json) => readPipelineShape(json, { containerDefaults });
const ofType = (json: Json, type: string) => Object.values(json.Resources).filter((r) => r.Type === type);
const idOf = (json: Json, type: string) =>
  Object.entries(json.Resources).find(([, r]) => r.Type === type)![0];

/** The baseline with its scaling as a newer stack has it: high resolution target tracking, a step policy on age. */
function newerScaling(): Json {
  const json = baseline();
  const target = idOf(json, "AWS::ApplicationAutoScaling::ScalableTarget");
  const intake = Object.entries(json.Resources).find(
    ([id, r]) => r.Type === "AWS::SQS::Queue" && id.includes("Intake"),
  )![0];
  const tracking = ofType(json, "AWS::ApplicationAutoScaling::ScalingPolicy")[0]!;
  tracking.Properties.TargetTrackingScalingPolicyConfiguration = {
    PredefinedMetricSpecification: {
      PredefinedMetricType: "SageMakerVariantConcurrentRequestsPerModelHighResolution",
    },
    TargetValue: 1.5,
    ScaleOutCooldown: 60,
    ScaleInCooldown: 600,
  };
  json.Resources.AgeStep = {
    Type: "AWS::ApplicationAutoScaling::ScalingPolicy",
    Properties: {
      PolicyName: "AgeStep",
      PolicyType: "StepScaling",
      ScalingTargetId: { Ref: target },
      StepScalingPolicyConfiguration: {
        AdjustmentType: "PercentChangeInCapacity",
        Cooldown: 120,
        StepAdjustments: [
          { MetricIntervalLowerBound: 0, MetricIntervalUpperBound: 300, ScalingAdjustment: 50 },
          { MetricIntervalLowerBound: 300, ScalingAdjustment: 100 },
        ],
      },
    },
  };
  json.Resources.AgeAlarm = {
    Type: "AWS::CloudWatch::Alarm",
    Properties: {
      AlarmActions: [{ Ref: "AgeStep" }],
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      MetricName: "ApproximateAgeOfOldestMessage",
      Namespace: "AWS/SQS",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [intake, "QueueName"] } }],
      Period: 60,
      Statistic: "Maximum",
      Threshold: 300,
    },
  };
  return json;
}

describe("the capacity model's template reader", () => {
  it("reads newer scaling: high-resolution target tracking, a step policy and its alarm", () => {
    const shape = read(newerScaling());
    expect(shape.policies).toEqual([
      expect.objectContaining({
        kind: "target",
        metric: "concurrentRequestsPerModel",
        periodSeconds: 10,
        target: 1.5,
        scaleOutCooldown: 60,
        scaleInCooldown: 600,
      }),
      {
        kind: "step",
        name: "AgeStep",
        alarm: {
          metric: "oldestMessageAge",
          threshold: 300,
          comparison: "atOrAbove",
          periodSeconds: 60,
          evaluationPeriods: 3,
          datapointsToAlarm: 2,
        },
        adjustmentType: "PercentChangeInCapacity",
        steps: [
          { lower: 0, upper: 300, adjustment: 50 },
          { lower: 300, upper: undefined, adjustment: 100 },
        ],
        cooldown: 120,
      },
    ]);
  });

  it("reads a step policy's alarm on the oldest item's age: the maximum of SQS's and the decide function's", () => {
    const json = newerScaling();
    const alarm = json.Resources.AgeAlarm!.Properties;
    const sqsAge = {
      Namespace: "AWS/SQS",
      MetricName: "ApproximateAgeOfOldestMessage",
      Dimensions: alarm.Dimensions,
    };
    const withMetrics = (second: Record<string, unknown>, period = 60) => {
      for (const key of ["MetricName", "Namespace", "Dimensions", "Period", "Statistic"]) delete alarm[key];
      alarm.Metrics = [
        { Id: "e", Expression: "MAX([queued, FILL(received, 0)])", ReturnData: true },
        { Id: "queued", MetricStat: { Metric: sqsAge, Period: 60, Stat: "Maximum" }, ReturnData: false },
        {
          Id: "received",
          MetricStat: { Metric: second, Period: period, Stat: "Maximum" },
          ReturnData: false,
        },
      ];
    };
    withMetrics({
      Namespace: METRICS.namespace,
      MetricName: METRICS.oldestItemAgeSeconds,
      Dimensions: [{ Name: METRICS.laneDimension, Value: "intake" }],
    });
    expect(read(json).policies[1]).toMatchObject({
      kind: "step",
      alarm: { metric: "oldestMessageAge", periodSeconds: 60, threshold: 300 },
    });
    // A maximum of two different things, or over two periods, is not one metric the model simulates.
    withMetrics({ Namespace: "AWS/SQS", MetricName: "ApproximateNumberOfMessagesVisible" });
    expect(() => read(json)).toThrow(/AgeAlarm: Metrics: a maximum of different metrics or periods/);
    withMetrics({ Namespace: METRICS.namespace, MetricName: METRICS.oldestItemAgeSeconds }, 300);
    expect(() => read(json)).toThrow(/AgeAlarm: Metrics: a maximum of different metrics or periods/);
  });

  it("finds a named endpoint and its scalable target by the name", () => {
    const json = baseline();
    const endpoint = ofType(json, "AWS::SageMaker::Endpoint")[0]!;
    endpoint.Properties.EndpointName = "Stack-ml-c6i-xlarge";
    const fn = ofType(json, "AWS::Lambda::Function")[0]!;
    (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.DECISION_ENDPOINT_NAME =
      "Stack-ml-c6i-xlarge";
    const target = ofType(json, "AWS::ApplicationAutoScaling::ScalableTarget")[0]!;
    target.Properties.ResourceId = "endpoint/Stack-ml-c6i-xlarge/variant/ml-c6i-xlarge";
    target.Properties.MaxCapacity = 40;
    const shape = read(json);
    expect(shape.endpoint.maxInstances).toBe(40);
    expect(shape.policies).toHaveLength(1);
  });

  it("reads the container's queue and the routing strategy when the template sets them", () => {
    const json = baseline();
    const model = ofType(json, "AWS::SageMaker::Model")[0]!;
    (
      model.Properties.PrimaryContainer as { Environment: Record<string, string> }
    ).Environment.DECIDE_QUEUE_SIZE = "3";
    const config = ofType(json, "AWS::SageMaker::EndpointConfig")[0]!;
    (config.Properties.ProductionVariants as Record<string, unknown>[])[0]!.RoutingConfig = {
      RoutingStrategy: "LEAST_OUTSTANDING_REQUESTS",
    };
    expect(read(json).endpoint).toMatchObject({ queueSize: 3, routing: "least-outstanding" });
  });

  it.each([
    [
      "no instance type",
      (j: Json) =>
        delete (
          ofType(j, "AWS::SageMaker::EndpointConfig")[0]!.Properties.ProductionVariants as Record<
            string,
            unknown
          >[]
        )[0]!.InstanceType,
      /EndpointConfig.*ProductionVariants\[0\]\.InstanceType: is missing/,
    ],
    [
      "no scaling maximum",
      (j: Json) => delete ofType(j, "AWS::ApplicationAutoScaling::ScalableTarget")[0]!.Properties.MaxCapacity,
      /ScalableTarget.*: MaxCapacity: is missing/,
    ],
    [
      "a concurrency from a parameter",
      (j: Json) => {
        (
          ofType(j, "AWS::Lambda::EventSourceMapping")[0]!.Properties.ScalingConfig as Record<string, unknown>
        ).MaximumConcurrency = { Ref: "Concurrency" };
      },
      /EventSourceMapping .*: ScalingConfig\.MaximumConcurrency: must be a literal number/,
    ],
    [
      "a metric it cannot simulate",
      (j: Json) => {
        ofType(
          j,
          "AWS::ApplicationAutoScaling::ScalingPolicy",
        )[0]!.Properties.TargetTrackingScalingPolicyConfiguration = {
          CustomizedMetricSpecification: {
            Namespace: "AWS/SageMaker",
            MetricName: "CPUUtilization",
            Statistic: "Average",
          },
          TargetValue: 70,
        };
      },
      /CustomizedMetricSpecification\.MetricName: the capacity model does not simulate AWS\/SageMaker CPUUtilization/,
    ],
    [
      "a step policy without its alarm",
      (j: Json) => {
        const n = newerScaling();
        delete n.Resources.AgeAlarm;
        Object.assign(j.Resources, n.Resources);
      },
      /ScalingPolicy AgeStep: AlarmActions: expected one AWS::CloudWatch::Alarm/,
    ],
    [
      "no decide function",
      (j: Json) => {
        for (const f of ofType(j, "AWS::Lambda::Function")) f.Properties.Environment = {};
      },
      /DECISION_ENDPOINT_NAME: expected exactly one function/,
    ],
  ])("names the property when the template has %s", (_, change, message) => {
    const json = baseline();
    change(json);
    expect(() => read(json)).toThrow(TemplateShapeError);
    expect(() => read(json)).toThrow(message);
  });

  it("refuses a template that leaves the container's queue to its default when no default is given", () => {
    expect(() => readPipelineShape(baseline())).toThrow(
      /AWS::SageMaker::Model .*: Environment\.DECIDE_QUEUE_SIZE: is missing/,
    );
  });

  it("reads the stack as synthesized now", () => {
    const json = Template.fromStack(synthStack()).toJSON() as Json;
    const shape = read(json);
    expect(shape.endpoint.mode).toBe("realtime");
    expect(shape.endpoint.maxInstances).toBeGreaterThanOrEqual(shape.endpoint.minInstances);
    expect(shape.policies.length).toBeGreaterThan(0);
    expect(shape.intake.maxConcurrency).toBeGreaterThanOrEqual(2);
    const serverless = read(Template.fromStack(synthStack({ endpointMode: "serverless" })).toJSON() as Json);
    expect(serverless.endpoint.mode).toBe("serverless");
    expect(serverless.policies).toEqual([]);
  }, 180_000);
});
