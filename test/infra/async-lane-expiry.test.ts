/**
 * The async lane's watch on SageMaker's request TTL and its smaller settings, as synthesized: an
 * alarm on the endpoint's `ExpiredRequests`, one on the oldest open object's age (published by
 * the lane's functions) past the hold-back's budget, the notifications queue's oldest message and
 * a visibility that delays a failed try minutes, not 90; the functions know the
 * maximum instance count the hold-back divides by; `async/` objects expire after the queues'
 * retention. Under `-c endpointMode=async` the live intake's own queue age is alarmed in minutes
 * (the decide function's metric does not exist there), and its open objects too.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ASYNC_LANE,
  ASYNC_METRICS,
  ASYNC_RESULTS_VISIBILITY_SECONDS,
  DECIDE_QUEUES,
  MAX_RECEIVE_COUNT,
  ON_CALL_ALARMS,
  SIZING_MARGIN,
} from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
let batchAsync: Record<string, Resource>;
let liveAsync: Record<string, Resource>;

beforeAll(() => {
  batchAsync = Template.fromStack(synthStack({ asyncMaxInstanceCount: 6 })).toJSON().Resources;
  liveAsync = Template.fromStack(synthStack({ endpointMode: "async" })).toJSON().Resources;
}, 240_000);

const ofType = (type: string, from: Record<string, Resource>) =>
  Object.entries(from).filter(([, r]) => r.Type === type) as [string, Resource][];
const text = (value: unknown) => JSON.stringify(value);
const alarms = (from: Record<string, Resource>): Record<string, unknown>[] =>
  ofType("AWS::CloudWatch::Alarm", from).map(([id, a]) => ({ id, ...a.Properties }));
const notifies = (alarm: Record<string, unknown>) =>
  ((alarm.AlarmActions as unknown[] | undefined) ?? []).length > 0;
const openObjectAlarms = (from: Record<string, Resource>) =>
  alarms(from).filter((a) => a.MetricName === ASYNC_METRICS.oldestOpenObjectAgeSeconds);
const laneOf = (alarm: Record<string, unknown>) =>
  (alarm.Dimensions as { Name: string; Value: string }[]).find((d) => d.Name === "lane")?.Value;

describe("the async lane's watch on the request TTL", () => {
  it("alarms on SageMaker's ExpiredRequests for the endpoint's variant, and notifies", () => {
    const expired = alarms(batchAsync).filter((a) => a.MetricName === "ExpiredRequests");
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ Namespace: "AWS/SageMaker", Statistic: "Sum", Threshold: 0 });
    expect(text(expired[0]!.Dimensions)).toMatch(/EndpointName.*VariantName/);
    expect(notifies(expired[0]!)).toBe(true);
  });

  it("alarms on the oldest open batch object past the hold-back's budget, and notifies", () => {
    const open = openObjectAlarms(batchAsync);
    expect(open.map(laneOf)).toEqual(["batch"]);
    expect(open[0]).toMatchObject({
      Namespace: "DecisionPipeline",
      Statistic: "Maximum",
      Threshold: ASYNC_LANE.requestTtlSeconds / SIZING_MARGIN,
    });
    expect(notifies(open[0]!)).toBe(true);
  });

  it("watches the notifications queue's oldest message, and lets one failed try delay an object minutes", () => {
    const [queueId, queue] = ofType("AWS::SQS::Queue", batchAsync).find(([id]) =>
      id.startsWith("PipelineAsyncNotificationsQueue"),
    )!;
    expect(queue.Properties.VisibilityTimeout).toBe(ASYNC_RESULTS_VISIBILITY_SECONDS);
    expect(ASYNC_RESULTS_VISIBILITY_SECONDS).toBeLessThanOrEqual(30 * 60);
    expect(text(queue.Properties.RedrivePolicy)).toContain(`"maxReceiveCount":${MAX_RECEIVE_COUNT}`);
    const age = alarms(batchAsync).filter(
      (a) => a.MetricName === "ApproximateAgeOfOldestMessage" && text(a.Dimensions).includes(queueId),
    );
    expect(age).toHaveLength(1);
    expect(age[0]!.Threshold).toBe(2 * ASYNC_RESULTS_VISIBILITY_SECONDS);
    expect(notifies(age[0]!)).toBe(true);
  });

  it("tells the submit and result functions the maximum instance count the hold-back divides by", () => {
    const lane = ofType("AWS::Lambda::Function", batchAsync).filter(([id]) =>
      /^PipelineAsync(Submit|Results)/.test(id),
    );
    expect(lane).toHaveLength(2);
    for (const [, fn] of lane) expect(text(fn.Properties.Environment)).toContain('"ASYNC_MAX_INSTANCES":"6"');
  });

  it("expires the lane's objects under async/ after the queues' retention", () => {
    const [, bucket] = ofType("AWS::S3::Bucket", batchAsync).find(([id]) =>
      id.startsWith("PipelineFilesBucket"),
    )!;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    const rule = rules.find((r) => r.Prefix === "async/");
    expect(rule).toMatchObject({ Status: "Enabled", ExpirationInDays: DECIDE_QUEUES.retentionDays + 1 });
  });
});

describe("-c endpointMode=async: the live intake's age in minutes", () => {
  it("alarms on the intake queue's own ApproximateAgeOfOldestMessage, and notifies", () => {
    const [intakeId] = ofType("AWS::SQS::Queue", liveAsync).find(([id]) =>
      id.startsWith("PipelineIntakeQueue"),
    )!;
    const own = alarms(liveAsync).filter(
      (a) => a.MetricName === "ApproximateAgeOfOldestMessage" && text(a.Dimensions).includes(intakeId),
    );
    expect(own).toHaveLength(1);
    expect(own[0]!.Threshold).toBe(ON_CALL_ALARMS.oldestMessageMinutes.intake * 60);
    expect(notifies(own[0]!)).toBe(true);
  });

  it("alarms on the oldest open intake object in minutes, the batch's past the budget", () => {
    const open = openObjectAlarms(liveAsync);
    expect(open.map(laneOf).sort()).toEqual(["batch", "intake"]);
    const intake = open.find((a) => laneOf(a) === "intake")!;
    expect(intake.Threshold).toBe(ASYNC_LANE.alarms.intakeOpenObjectMinutes * 60);
    expect(intake.Threshold as number).toBeLessThanOrEqual(3600);
    expect(notifies(intake)).toBe(true);
  });
});
