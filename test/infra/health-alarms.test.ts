/**
 * What on-call would miss (issue 24, observation 7), read from the synthesized template JSON:
 * every function's errors and throttles, the review API's 5xx, the oldest message of the batch,
 * batch files, auto-action and review queues, the endpoint's 4xx, CPU, memory and instances at
 * the maximum, DynamoDB throttling (the table's requests and each secondary index's events) and
 * the decide function's longest run near its timeout, each watched; and by severity (issue 32,
 * observation 4): critical alarms (endpoint failing, intake not draining, table throttling)
 * notify on their own, warnings through the composite "pipeline unhealthy" alarm and each of
 * their transitions once through the state-change rule. The review service levels breach when
 * their figures stop arriving.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { vcpusOf } from "../../infra/constructs/endpoint/instance-types.ts";
import type { DecisionStack } from "../../infra/decision-stack.ts";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/dynamodb/decisions-table.ts";
import {
  DECIDE_FUNCTION,
  ENDPOINT_DEADLINE_MS,
  MEASURED_SECONDS_PER_ITEM,
  METRICS,
  ON_CALL_ALARMS,
} from "../../shared/domain/topology.ts";
import { readsOldestItemAge } from "../helpers/alarm-metrics.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Alarm = Record<string, unknown> & { Dimensions?: { Name: string; Value: unknown }[] };
/** One entry of an alarm's `Metrics`: a metric math expression or a metric it reads. */
type MathQuery = { Id: string; Expression?: string; MetricStat?: { Metric: { Namespace: string } } };

let stack: DecisionStack;
let resources: Record<string, Resource>;
let serverless: Record<string, Resource>;

beforeAll(() => {
  stack = synthStack({ maxInstanceCount: 6 });
  resources = Template.fromStack(stack).toJSON().Resources;
  serverless = Template.fromStack(synthStack({ endpointMode: "serverless" })).toJSON().Resources;
}, 180_000);

const ofType = (type: string, within = resources) =>
  Object.entries(within).filter(([, r]) => r.Type === type);
/** The composite alarm and the logical ids of the alarms its rule names. */
function composite(within = resources): { props: Record<string, unknown>; members: Set<string> } {
  const [[, alarm]] = ofType("AWS::CloudWatch::CompositeAlarm", within) as [[string, Resource]];
  const rule = JSON.stringify(alarm.Properties.AlarmRule);
  const members = [...rule.matchAll(/"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]/g)].map((m) => m[1]!);
  return { props: alarm.Properties, members: new Set(members) };
}
/** Whether someone hears of alarm `id`: it notifies on its own (critical) or is a composite's member (warning). */
function watched(id: string, alarm: Resource, within = resources): boolean {
  return composite(within).members.has(id) || alarm.Properties.AlarmActions !== undefined;
}
/** The watched alarms on `metricName` with a dimension referring to `ref`. */
function signals(metricName: string, ref?: string, within = resources): [string, Alarm][] {
  return ofType("AWS::CloudWatch::Alarm", within)
    .filter(([id, a]) => watched(id, a, within) && a.Properties.MetricName === metricName)
    .filter(([, a]) => ref === undefined || JSON.stringify(a.Properties.Dimensions).includes(`"${ref}"`))
    .map(([id, a]) => [id, a.Properties as Alarm]);
}
const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;

describe("alarms on-call needs", () => {
  it("watches every function's errors and throttles, each a signal of the composite alarm", () => {
    const functions = Object.entries(stack.pipeline.functions);
    expect(functions.length).toBeGreaterThanOrEqual(12);
    for (const [role, fn] of functions) {
      const id = logicalId(fn);
      for (const metric of ["Errors", "Throttles"]) {
        const found = signals(metric, id);
        expect(found, `${role} ${metric}`).toHaveLength(1);
        expect(found[0]![1]).toMatchObject({ Namespace: "AWS/Lambda", Threshold: 0, Statistic: "Sum" });
      }
    }
  });

  it("watches the review API's 5xx, DynamoDB throttling and the decide function's longest run", () => {
    expect(signals("5xx", logicalId(stack.pipeline.reviewAccess.api))).toHaveLength(1);
    const [[, throttles]] = ofType("AWS::CloudWatch::Alarm").filter(
      ([id, a]) =>
        watched(id, a) &&
        JSON.stringify(a.Properties.Metrics ?? []).includes('"MetricName":"ThrottledRequests"'),
    ) as [[string, Resource]];
    for (const operation of ["GetItem", "PutItem", "UpdateItem", "Query", "TransactWriteItems"])
      expect(JSON.stringify(throttles.Properties.Metrics)).toContain(`"Value":"${operation}"`);
    const durations = signals("Duration", logicalId(stack.pipeline.functions.decide!));
    expect(durations).toHaveLength(1);
    const [, duration] = durations[0]!;
    const timeoutMs = DECIDE_FUNCTION.timeoutSeconds * 1000;
    expect(duration).toMatchObject({ Statistic: "Maximum" });
    expect(duration.Threshold as number).toBeLessThan(timeoutMs);
    expect(duration.Threshold as number).toBe(ON_CALL_ALARMS.decideDurationShare * timeoutMs);
  });

  it("watches the oldest message of the intake, batch, batch files, auto-action and review queues", () => {
    const { queues } = stack.pipeline;
    const minutes = ON_CALL_ALARMS.oldestMessageMinutes;
    for (const [queue, limit] of [
      [stack.pipeline.deadLetterSources["batch-files"].home!, minutes.batchFiles],
      [queues.autoAction, minutes.autoAction],
      [queues.review, minutes.review],
    ] as const) {
      const found = signals("ApproximateAgeOfOldestMessage", logicalId(queue));
      expect(found, logicalId(queue)).toHaveLength(1);
      expect(found[0]![1].Threshold).toBe(limit * 60);
    }
    // The decide function's two lanes: SQS's age leaves out items received three times or more,
    // which the overload backoff makes of the oldest ones, so these read the larger of it and the
    // age the decide function received.
    for (const [queue, lane, limit] of [
      [queues.intake, "intake", minutes.intake],
      [queues.batch, "batch", minutes.batch],
    ] as const) {
      const found = ofType("AWS::CloudWatch::Alarm").filter(
        ([id, a]) => watched(id, a) && readsOldestItemAge(a.Properties, logicalId(queue), lane),
      );
      expect(found, lane).toHaveLength(1);
      expect(found[0]![1].Properties.Threshold).toBe(limit * 60);
      // No invocation, no item received: not a breach (the queue's own figure still counts).
      expect(found[0]![1].Properties.TreatMissingData).toBe("notBreaching");
      // Any period over the limit in the lookback holds it: an item in backoff is measured only
      // when received again, and an alarm that dropped to OK in between would flap.
      expect(found[0]![1].Properties).toMatchObject({
        EvaluationPeriods: ON_CALL_ALARMS.oldestAgeLookbackPeriods,
        DatapointsToAlarm: 1,
      });
      expect(signals("ApproximateAgeOfOldestMessage", logicalId(queue)), lane).toEqual([]);
    }
  });

  it("watches each secondary index's throttled reads and writes, which the table's metric leaves out", () => {
    const indexes = stack.pipeline.tableIndexNames;
    expect(indexes).toEqual(DECISIONS_TABLE_SCHEMA.indexes.map((index) => index.name));
    for (const index of indexes) {
      const found = ofType("AWS::CloudWatch::Alarm").filter(
        ([id, a]) =>
          watched(id, a) &&
          JSON.stringify(a.Properties.Metrics ?? []).includes(
            `"Name":"GlobalSecondaryIndexName","Value":"${index}"`,
          ),
      );
      expect(found, index).toHaveLength(1);
      const metrics = JSON.stringify(found[0]![1].Properties.Metrics);
      for (const name of ["ReadThrottleEvents", "WriteThrottleEvents"])
        expect(metrics, `${index} ${name}`).toContain(`"MetricName":"${name}"`);
      expect(found[0]![1].Properties.Threshold).toBe(0);
    }
  });

  it("zero-fills every sparse count an alarm's metric math combines, so one empty series cannot empty the result", () => {
    // Metric math leaves a result empty where any series it combines has no datapoint, and an
    // alarm reads empty as missing (here: not breaching). Counts of things that did not happen
    // have no datapoint; SQS's queue metrics arrive every minute and may stay bare.
    const combining = [...ofType("AWS::CloudWatch::Alarm"), ...ofType("AWS::CloudWatch::Alarm", serverless)]
      .map(([id, a]) => [id, a.Properties.Metrics as MathQuery[] | undefined] as const)
      .filter(([, metrics]) => (metrics ?? []).filter((m) => m.MetricStat).length >= 2);
    expect(combining.length).toBeGreaterThanOrEqual(4);
    const bare: string[] = [];
    for (const [id, metrics] of combining) {
      const expression = metrics!.find((m) => m.Expression)!.Expression!;
      for (const m of metrics!.filter((m) => m.MetricStat && m.MetricStat.Metric.Namespace !== "AWS/SQS")) {
        const outsideFill = expression.replaceAll(`FILL(${m.Id}, 0)`, "");
        if (new RegExp(`\\b${m.Id}\\b`).test(outsideFill)) bare.push(`${id}: ${m.Id} in ${expression}`);
      }
    }
    expect(bare).toEqual([]);
    // The two the template review found: the escalation rate (empty when every item escalates)
    // and the table's throttles (empty unless every operation throttled in the same period).
    const expressions = combining.map(([, metrics]) => metrics!.find((m) => m.Expression)!.Expression!);
    expect(expressions).toContain(
      "IF((FILL(auto, 0) + FILL(human, 0)) > 0, FILL(human, 0) / (FILL(auto, 0) + FILL(human, 0)), 0)",
    );
    expect(expressions.some((e) => e.startsWith("FILL(getitem, 0) + "))).toBe(true);
  });

  it("watches the endpoint's 4xx, CPU, memory and instances held at the maximum", () => {
    expect(signals("Invocation4XXErrors")).toHaveLength(1);
    // Endpoint errors are the decide function's count of failures other than overload refusals;
    // SageMaker's Invocation5XXErrors counts the busy 503s too, so no signal reads it.
    expect(signals("Invocation5XXErrors")).toEqual([]);
    expect(signals(METRICS.endpointFailures)).toHaveLength(1);
    // ml.c6i.xlarge: 4 vCPUs, SageMaker's CPUUtilization reads up to 400%.
    const cpu = signals("CPUUtilization").map(([, a]) => a);
    expect(cpu.find((a) => a.Statistic === "Average")).toMatchObject({
      Namespace: "/aws/sagemaker/Endpoints",
      Threshold: ON_CALL_ALARMS.endpointCpuShare * 400,
    });
    // The one-minute sample count is the instances in service: at the maximum asked for (6).
    const atMaximum = cpu.find((a) => a.Statistic === "SampleCount")!;
    expect(atMaximum).toMatchObject({
      Period: 60,
      Threshold: 6,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
    });
    // A blue/green deployment runs the new fleet (starting, then baking) beside the old under the
    // same variant, so the count doubles: at 3 of 6 instances, a deployment alone would read 6.
    // The alarm needs more minutes at the maximum than that overlap can last, read from the template.
    const [, endpoint] = ofType("AWS::SageMaker::Endpoint")[0]!;
    const [, config] = ofType("AWS::SageMaker::EndpointConfig")[0]!;
    const policy = (
      endpoint.Properties as {
        DeploymentConfig: {
          BlueGreenUpdatePolicy: {
            TerminationWaitInSeconds: number;
            TrafficRoutingConfiguration: { WaitIntervalInSeconds?: number };
          };
        };
      }
    ).DeploymentConfig.BlueGreenUpdatePolicy;
    // The canary's bake, then the whole fleet's.
    const bake =
      policy.TerminationWaitInSeconds + (policy.TrafficRoutingConfiguration.WaitIntervalInSeconds ?? 0);
    const startup = (
      config.Properties.ProductionVariants as { ContainerStartupHealthCheckTimeoutInSeconds: number }[]
    )[0]!.ContainerStartupHealthCheckTimeoutInSeconds;
    expect(bake).toBeGreaterThanOrEqual(900);
    expect((atMaximum.DatapointsToAlarm as number) * 60).toBeGreaterThanOrEqual(
      bake + startup + ON_CALL_ALARMS.sustainedMinutes * 60,
    );
    expect(atMaximum.EvaluationPeriods as number).toBeGreaterThan(atMaximum.DatapointsToAlarm as number);
    expect(signals("MemoryUtilization")).toHaveLength(1);
    // A serverless endpoint has no instances of its own to watch; its errors are still signals.
    expect(signals("CPUUtilization", undefined, serverless)).toHaveLength(0);
    expect(signals("Invocation4XXErrors", undefined, serverless)).toHaveLength(1);
  });

  it("notifies critical alarms on their own and warnings through the composite, each transition once by the rule", () => {
    const { props, members } = composite();
    expect(props.AlarmActions).toHaveLength(1);
    expect(props.OKActions).toEqual(props.AlarmActions);
    // Warnings: no actions of their own, named so the state-change rule forwards each transition.
    const [[, rule]] = ofType("AWS::Events::Rule").filter(([, r]) =>
      JSON.stringify(r.Properties.EventPattern ?? {}).includes("CloudWatch Alarm State Change"),
    ) as [[string, Resource]];
    const pattern = rule.Properties.EventPattern as { detail: { alarmName: { prefix: string }[] } };
    const prefix = pattern.detail.alarmName[0]!.prefix;
    for (const id of members) {
      expect(resources[id]!.Properties.AlarmActions, id).toBeUndefined();
      expect(String(resources[id]!.Properties.AlarmName), id).toMatch(new RegExp(`^${prefix}`));
    }
    // Critical: notify on their own, and not through the rule as well (sent once).
    const critical = ofType("AWS::CloudWatch::Alarm").filter(([, a]) => a.Properties.AlarmActions);
    for (const [id, a] of critical)
      expect(String(a.Properties.AlarmName), id).not.toMatch(new RegExp(`^${prefix}`));
    const criticalText = JSON.stringify(critical.map(([, a]) => a.Properties));
    for (const what of [
      METRICS.endpointFailures, // the endpoint failing
      "Invocation5XXErrors", // a fleet refusing nearly every call
      METRICS.oldestItemAgeSeconds, // the intake not draining...
      "ApproximateNumberOfMessagesNotVisible", // ... or piling up in flight
      "ThrottledRequests", // table throttling
      "WriteThrottleEvents",
    ])
      expect(criticalText, what).toContain(`"${what}"`);
    // Warnings of others join through health.add: the operations' model latency, a new fleet
    // slower or silent during its bake, the capacity follower's heartbeat, the Audit function's
    // errors and throttles, and those of the async lane's submit and result functions.
    const warnings = Object.entries(stack.operations.health.signals).filter(
      ([, alarm]) => resources[logicalId(alarm)]!.Properties.AlarmActions === undefined,
    );
    expect(members.size).toBe(warnings.length + 1 + 2 + 1 + 2 + 4);
  });

  it("breaches the review service levels when the backlog function stops reporting", () => {
    const levels = ofType("AWS::CloudWatch::Alarm").filter(
      ([, a]) => a.Properties.MetricName === "OldestPendingReviewMinutes",
    );
    expect(levels.length).toBeGreaterThan(0);
    for (const [id, level] of levels) expect(level.Properties.TreatMissingData, id).toBe("breaching");
  });
});

describe("vcpusOf", () => {
  it("reads the vCPUs from the instance size, and knows when it cannot", () => {
    expect(["ml.c6i.large", "ml.c6i.xlarge", "ml.c7i.4xlarge", "ml.g5.12xlarge"].map(vcpusOf)).toEqual([
      2, 4, 16, 48,
    ]);
    expect(vcpusOf("ml.t2.medium")).toBeUndefined();
    expect(vcpusOf("ml.m5.metal")).toBeUndefined();
  });
});

describe("alarms that stay quiet on healthy load and say where they go", () => {
  it("raises the model-latency signal only past most of the deadline, above a full call of fresh items", () => {
    const [[, latency]] = signals("ModelLatency") as [[string, Alarm]];
    const fullCall = DECIDE_FUNCTION.endpointBatchItems * MEASURED_SECONDS_PER_ITEM.fresh * 1_000_000;
    // Before, a fixed 10 s: a healthy call of ten fresh items (15.5 s) kept it, and the composite, in ALARM.
    expect(latency.Threshold as number).toBeGreaterThan(fullCall);
    expect(latency.Threshold as number).toBeLessThanOrEqual(ENDPOINT_DEADLINE_MS * 1000);
  });

  it("names the alarm topic in the outputs, and warns at synth when no one is subscribed", () => {
    const outputs = Template.fromStack(stack).toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.AlarmTopicArn?.Value)).toContain("OperationsAlarms");
    const warnings = Annotations.fromStack(stack).findWarning("*", Match.stringLikeRegexp("no subscriber"));
    expect(warnings).toHaveLength(1);
  });
});
