/**
 * The async lane as synthesized, read from the template JSON as an architect reads it: the async
 * endpoint's configuration (outputs under the pipeline bucket, encrypted SNS topics, one object
 * per instance), its scalable target from zero, target tracking on the backlog per instance, the
 * wake-up step policy driven by an alarm on HasBacklogWithoutCapacity, the endpoint role's reach
 * in the bucket, the submit and result functions' event sources, the alarms, and
 * `-c batchLane=realtime` keeping today's lane.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { readAsyncShape } from "../../infra/capacity/async-template.ts";
import { asyncItemsPerObject } from "../../shared/domain/async/async-objects.ts";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
let resources: Record<string, Resource>;
let realtime: Record<string, Resource>;

beforeAll(() => {
  const stack = synthStack({ asyncMaxInstanceCount: 6 });
  expect(
    Annotations.fromStack(stack).findError("*", Match.stringLikeRegexp("AwsSolutions-.*|Serverless-.*")),
  ).toEqual([]);
  resources = Template.fromStack(stack).toJSON().Resources;
  realtime = Template.fromStack(synthStack({ batchLane: "realtime" })).toJSON().Resources;
}, 240_000);

const ofType = (type: string, from = resources) =>
  Object.entries(from).filter(([, r]) => r.Type === type) as [string, Resource][];
const refOf = (value: unknown): string | undefined =>
  (value as { Ref?: string })?.Ref ?? (value as { "Fn::GetAtt"?: string[] })?.["Fn::GetAtt"]?.[0];
const text = (value: unknown) => JSON.stringify(value);

/** The async endpoint's configuration: the one with AsyncInferenceConfig. */
function asyncConfig(from = resources) {
  return ofType("AWS::SageMaker::EndpointConfig", from).filter(([, r]) => r.Properties.AsyncInferenceConfig);
}

/** The async endpoint's name, as the template writes it. */
function asyncEndpointName(): string {
  const [configId] = asyncConfig()[0]!;
  const endpoint = ofType("AWS::SageMaker::Endpoint").find(([, r]) =>
    text(r.Properties.EndpointConfigName).includes(configId),
  );
  return String(endpoint![1].Properties.EndpointName);
}

/** The event source mappings of the function whose logical id starts with `prefix`. */
function mappingsOf(prefix: string, from = resources) {
  const [fnId] = ofType("AWS::Lambda::Function", from).find(([id]) => id.startsWith(prefix))!;
  return ofType("AWS::Lambda::EventSourceMapping", from)
    .filter(([, m]) => refOf(m.Properties.FunctionName) === fnId)
    .map(([, m]) => m.Properties);
}

describe("the async lane (-c batchLane=async, the default)", () => {
  it("configures the async endpoint: answers and failures under the bucket, encrypted topics, one object per instance", () => {
    const configs = asyncConfig();
    expect(configs).toHaveLength(1);
    const config = configs[0]![1].Properties.AsyncInferenceConfig as {
      OutputConfig: {
        S3OutputPath: unknown;
        S3FailurePath: unknown;
        NotificationConfig: Record<string, unknown>;
      };
      ClientConfig: { MaxConcurrentInvocationsPerInstance: number };
    };
    const bucketId = ofType("AWS::S3::Bucket").find(([id]) => id.startsWith("PipelineFilesBucket"))![0];
    for (const [path, prefix] of [
      [config.OutputConfig.S3OutputPath, ASYNC_LANE.prefixes.results],
      [config.OutputConfig.S3FailurePath, ASYNC_LANE.prefixes.failures],
    ] as const) {
      expect(text(path)).toContain(bucketId);
      expect(text(path)).toContain(prefix);
    }
    expect(config.ClientConfig.MaxConcurrentInvocationsPerInstance).toBe(
      ASYNC_LANE.concurrentInvocationsPerInstance,
    );
    const topics = ["SuccessTopic", "ErrorTopic"].map((name) =>
      refOf(config.OutputConfig.NotificationConfig[name]),
    );
    for (const topicId of topics) {
      const topic = resources[topicId!]!;
      expect(topic.Type).toBe("AWS::SNS::Topic");
      // A customer managed key of this stack, with rotation.
      const key = resources[refOf(topic.Properties.KmsMasterKeyId)!]!;
      expect(key).toMatchObject({ Type: "AWS::KMS::Key", Properties: { EnableKeyRotation: true } });
    }
    // Both topics feed one queue, raw: its messages are SageMaker's notifications.
    const subscriptions = ofType("AWS::SNS::Subscription").filter(([, s]) =>
      topics.includes(refOf(s.Properties.TopicArn)),
    );
    expect(subscriptions.map(([, s]) => s.Properties)).toEqual([
      expect.objectContaining({ Protocol: "sqs", RawMessageDelivery: true }),
      expect.objectContaining({ Protocol: "sqs", RawMessageDelivery: true }),
    ]);
  });

  it("scales from zero: target tracking on the backlog per instance, and a step policy on an alarm on HasBacklogWithoutCapacity", () => {
    const name = asyncEndpointName();
    const targets = ofType("AWS::ApplicationAutoScaling::ScalableTarget").filter(([, t]) =>
      text(t.Properties.ResourceId).includes(name),
    );
    expect(targets).toHaveLength(1);
    const [targetId, target] = targets[0]!;
    expect(target.Properties).toMatchObject({ MinCapacity: 0, MaxCapacity: 6 });
    const policies = ofType("AWS::ApplicationAutoScaling::ScalingPolicy").filter(
      ([, p]) => refOf(p.Properties.ScalingTargetId) === targetId,
    );
    const tracking = policies.find(([, p]) => p.Properties.PolicyType === "TargetTrackingScaling")![1]
      .Properties.TargetTrackingScalingPolicyConfiguration as Record<string, unknown>;
    expect(tracking).toMatchObject({
      TargetValue: ASYNC_LANE.backlogPerInstanceTarget,
      CustomizedMetricSpecification: {
        MetricName: "ApproximateBacklogSizePerInstance",
        Namespace: "AWS/SageMaker",
        Statistic: "Average",
        Dimensions: [{ Name: "EndpointName", Value: name }],
      },
    });
    const steps = policies.filter(([, p]) => p.Properties.PolicyType === "StepScaling");
    const wakeAlarms = ofType("AWS::CloudWatch::Alarm").filter(
      ([, a]) => a.Properties.MetricName === "HasBacklogWithoutCapacity",
    );
    // The policy that adds an instance is what the HasBacklogWithoutCapacity alarm at 1 or more invokes.
    const adds = steps.find(([, p]) =>
      text(p.Properties.StepScalingPolicyConfiguration).includes('"ScalingAdjustment":1'),
    )!;
    const driving = wakeAlarms.filter(([, a]) =>
      (a.Properties.AlarmActions as unknown[] | undefined)?.some((x) => refOf(x) === adds[0]),
    );
    expect(driving).toHaveLength(1);
    expect(driving[0]![1].Properties).toMatchObject({
      Namespace: "AWS/SageMaker",
      Dimensions: [{ Name: "EndpointName", Value: name }],
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      Period: ASYNC_LANE.wakeUp.periodSeconds,
    });
  });

  it("lets the endpoint role read the requests only and write the answers only", () => {
    const [configId, config] = asyncConfig()[0]!;
    const modelId = refOf((config.Properties.ProductionVariants as { ModelName: unknown }[])[0]!.ModelName)!;
    const roleId = refOf(resources[modelId]!.Properties.ExecutionRoleArn)!;
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => refOf(r) === roleId))
      .flatMap(
        ([, p]) =>
          (p.Properties.PolicyDocument as { Statement: { Action: unknown; Resource: unknown }[] }).Statement,
      );
    const bucketId = ofType("AWS::S3::Bucket").find(([id]) => id.startsWith("PipelineFilesBucket"))![0];
    const onBucket = statements.filter((s) => text(s.Resource).includes(bucketId));
    expect(
      onBucket.map((s) => [[s.Action].flat().sort(), text(s.Resource).match(/\/async\/[a-z]+\/\*/g)]),
    ).toEqual([
      [["s3:GetObject"], ["/async/input/*"]],
      [["s3:AbortMultipartUpload", "s3:PutObject"], ["/async/output/*"]],
    ]);
    expect(configId).toBeTruthy();
  });

  it("feeds the submit function from the batch queue an object's worth at a time, and the result function from the notifications", () => {
    expect(mappingsOf("PipelineAsyncSubmit")).toEqual([
      expect.objectContaining({
        EventSourceArn: expect.objectContaining({
          "Fn::GetAtt": [expect.stringMatching(/^PipelineBatchQueue/), "Arn"],
        }),
        BatchSize: asyncItemsPerObject(),
        MaximumBatchingWindowInSeconds: ASYNC_LANE.submit.maxBatchingWindowSeconds,
        ScalingConfig: { MaximumConcurrency: ASYNC_LANE.submit.maxConcurrency },
        FunctionResponseTypes: ["ReportBatchItemFailures"],
      }),
    ]);
    expect(mappingsOf("PipelineAsyncResults")).toEqual([
      expect.objectContaining({
        EventSourceArn: expect.objectContaining({
          "Fn::GetAtt": [expect.stringMatching(/^PipelineAsyncNotificationsQueue/), "Arn"],
        }),
        BatchSize: 1,
      }),
    ]);
    // The decide function no longer reads the batch queue.
    expect(text(mappingsOf("PipelineDecide"))).not.toMatch(/BatchQueue/);
  });

  it("alarms on an old request, a wake-up that did not happen, failed invocations and notifications, and notifies", () => {
    const names = ofType("AWS::CloudWatch::Alarm")
      .filter(([, a]) => (a.Properties.AlarmActions as unknown[] | undefined)?.length)
      .map(([, a]) => [a.Properties.MetricName, a.Properties.Threshold, a.Properties.EvaluationPeriods]);
    expect(names).toEqual(
      expect.arrayContaining([
        ["ApproximateAgeOfOldestRequest", ASYNC_LANE.alarms.oldestRequestMinutes * 60, 1],
        ["HasBacklogWithoutCapacity", 1, ASYNC_LANE.alarms.wakeUpMinutes],
        ["InvocationFailures", 0, 1],
        ["NotificationFailures", 0, 1],
      ]),
    );
  });
});

describe("the capacity model's reading of the lane", () => {
  it("reads the endpoint, its scaling from zero, the wake-up and the objects' size from the template", () => {
    expect(readAsyncShape({ Resources: resources })).toEqual({
      endpointName: asyncEndpointName(),
      instanceType: "ml.c6i.xlarge",
      minInstances: 0,
      maxInstances: 6,
      concurrentPerInstance: ASYNC_LANE.concurrentInvocationsPerInstance,
      backlogTarget: ASYNC_LANE.backlogPerInstanceTarget,
      scaleOutCooldownSeconds: ASYNC_LANE.scaleOutCooldownSeconds,
      scaleInCooldownSeconds: ASYNC_LANE.scaleInCooldownSeconds,
      wakeUp: {
        periodSeconds: ASYNC_LANE.wakeUp.periodSeconds,
        evaluationPeriods: ASYNC_LANE.wakeUp.evaluationPeriods,
        step: 1,
        cooldownSeconds: ASYNC_LANE.wakeUp.cooldownSeconds,
      },
      itemsPerObject: asyncItemsPerObject(),
      batchingWindowSeconds: ASYNC_LANE.submit.maxBatchingWindowSeconds,
      submitConcurrency: ASYNC_LANE.submit.maxConcurrency,
    });
    expect(() => readAsyncShape({ Resources: realtime })).toThrow(/-c batchLane=realtime/);
  });
});

describe("-c batchLane=realtime", () => {
  it("keeps today's lane: no async endpoint, the decide function reads the batch queue", () => {
    expect(asyncConfig(realtime)).toEqual([]);
    expect(ofType("AWS::Lambda::Function", realtime).some(([id]) => id.startsWith("PipelineAsync"))).toBe(
      false,
    );
    expect(text(mappingsOf("PipelineDecide", realtime))).toMatch(/BatchQueue/);
  });
});
