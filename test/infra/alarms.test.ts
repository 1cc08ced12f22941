/**
 * The alarms as an on-call engineer relies on them, read from the synthesized template JSON:
 * every alarm's notifications can actually be delivered (CloudWatch may publish to the topic
 * and use its key, by the topic policy and key policy, for that alarm's ARN), and every alarm
 * says when it recovers.
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/dynamodb/decisions-table.ts";
import { DEAD_LETTER_SOURCES } from "../../shared/domain/dead-letters.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Effect: string;
  Principal?: { Service?: string | string[] };
  Action: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

const PSEUDO: Record<string, string> = {
  "AWS::Partition": "aws",
  "AWS::Region": "us-east-1",
  "AWS::AccountId": "123456789012",
};
const ALARM_TYPES = ["AWS::CloudWatch::Alarm", "AWS::CloudWatch::CompositeAlarm"];

let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  template = Template.fromStack(synthStack());
  resources = template.toJSON().Resources;
}, 120_000);

/** A template value with the pseudo parameters and joins resolved (other references stay objects). */
function resolve(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const ref = (value as { Ref?: string }).Ref;
  if (ref && PSEUDO[ref]) return PSEUDO[ref];
  const join = (value as { "Fn::Join"?: [string, unknown[]] })["Fn::Join"];
  if (join) {
    const parts = join[1].map(resolve);
    return parts.every((p) => typeof p === "string") ? parts.join(join[0]) : value;
  }
  return value;
}

/** IAM's ArnLike / StringLike: `*` any run, `?` one character. */
function like(pattern: string, value: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${regex}$`).test(value);
}

/** Whether a statement's conditions hold for a request from `sourceArn` in the test account. */
function conditionsHold(statement: Statement, sourceArn: string): boolean {
  const context: Record<string, string> = {
    "aws:SourceArn": sourceArn,
    "aws:SourceAccount": PSEUDO["AWS::AccountId"]!,
  };
  return Object.entries(statement.Condition ?? {}).every(([operator, tests]) =>
    Object.entries(tests).every(([key, expected]) => {
      const actual = context[key];
      const values = [expected].flat().map(resolve);
      if (actual === undefined || values.some((v) => typeof v !== "string")) return false;
      if (operator === "StringEquals" || operator === "ArnEquals") return values.includes(actual);
      if (operator === "StringLike" || operator === "ArnLike")
        return values.some((v) => like(v as string, actual));
      return false;
    }),
  );
}

/** Whether CloudWatch, for the alarm at `alarmArn`, is allowed `action` by these statements. */
function cloudWatchAllowed(statements: Statement[], action: string, alarmArn: string): boolean {
  return statements.some(
    (s) =>
      s.Effect === "Allow" &&
      [s.Principal?.Service].flat().includes("cloudwatch.amazonaws.com") &&
      [s.Action].flat().some((a) => like(a, action)) &&
      conditionsHold(s, alarmArn),
  );
}

/** Why CloudWatch cannot deliver this alarm's notifications to `topicId`, or undefined when it can. */
function undeliverable(topicId: string, alarmArn: string): string | undefined {
  const topic = resources[topicId];
  if (topic?.Type !== "AWS::SNS::Topic") return `${topicId} is not a topic of this stack`;
  const topicStatements = Object.values(resources)
    .filter(
      (r) =>
        r.Type === "AWS::SNS::TopicPolicy" &&
        (r.Properties.Topics as { Ref: string }[]).some((t) => t.Ref === topicId),
    )
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  if (!cloudWatchAllowed(topicStatements, "sns:Publish", alarmArn))
    return `the policy of ${topicId} does not let CloudWatch publish for ${alarmArn}`;
  const keyRef = (topic.Properties.KmsMasterKeyId as { "Fn::GetAtt"?: string[] } | undefined)?.["Fn::GetAtt"];
  if (!keyRef) return undefined;
  const key = resources[keyRef[0]!]!;
  const keyStatements = (key.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
  for (const action of ["kms:Decrypt", "kms:GenerateDataKey"])
    if (!cloudWatchAllowed(keyStatements, action, alarmArn))
      return `the key of ${topicId} does not allow CloudWatch ${action} for ${alarmArn}`;
  return undefined;
}

/** Whether an alarm only drives a scaling policy (Application Auto Scaling's own alarm, no person reads it). */
const drivesScaling = (alarm: Resource) => {
  const actions = (alarm.Properties.AlarmActions ?? []) as { Ref?: string }[];
  return (
    actions.length > 0 &&
    actions.every(
      (action) => resources[action.Ref ?? ""]?.Type === "AWS::ApplicationAutoScaling::ScalingPolicy",
    )
  );
};
/** The alarms people read: those that notify and the signals a composite alarm speaks for. */
const alarms = () =>
  Object.entries(resources).filter(([, r]) => ALARM_TYPES.includes(r.Type) && !drivesScaling(r));
/** The alarms with actions of their own. */
const notifying = () => alarms().filter(([, r]) => r.Properties.AlarmActions !== undefined);
/** The logical ids of the alarms a notifying composite alarm's rule names. */
const inNotifyingComposite = () =>
  new Set(
    notifying()
      .filter(([, r]) => r.Type === "AWS::CloudWatch::CompositeAlarm")
      .flatMap(([, r]) =>
        [...JSON.stringify(r.Properties.AlarmRule).matchAll(/"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]/g)].map(
          (m) => m[1]!,
        ),
      ),
  );

describe("alarms that deliver", () => {
  it("lets CloudWatch publish every alarm's notifications: topic policy and key policy, for that alarm", () => {
    expect(alarms().length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const [id, alarm] of alarms()) {
      // Unnamed, CloudFormation names an alarm "<stack>-<logical id>-<random suffix>".
      const name = alarm.Properties.AlarmName ?? `Test-${id}-1A2B3C4D5E6F`;
      expect(typeof name, id).toBe("string");
      const arn = `arn:aws:cloudwatch:us-east-1:123456789012:alarm:${name}`;
      const topics = [
        ...((alarm.Properties.AlarmActions ?? []) as unknown[]),
        ...((alarm.Properties.OKActions ?? []) as unknown[]),
      ];
      for (const topic of topics) {
        const why = undeliverable((topic as { Ref: string }).Ref, arn);
        if (why) problems.push(`${id}: ${why}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("delivers each warning's state change through the rule's own role: the topic and its key", () => {
    const [[ruleId, rule]] = Object.entries(resources).filter(
      ([, r]) =>
        r.Type === "AWS::Events::Rule" &&
        JSON.stringify(r.Properties.EventPattern ?? {}).includes("CloudWatch Alarm State Change"),
    ) as [[string, Resource]];
    const [target] = rule.Properties.Targets as {
      Arn: { Ref: string };
      RoleArn: { "Fn::GetAtt": string[] };
    }[];
    const topicId = target!.Arn.Ref;
    const roleId = target!.RoleArn["Fn::GetAtt"][0]!;
    // EventBridge may assume the role, for this rule.
    const trust = JSON.stringify(resources[roleId]!.Properties.AssumeRolePolicyDocument);
    expect(trust).toContain("events.amazonaws.com");
    const granted = Object.values(resources)
      .filter(
        (r) =>
          r.Type === "AWS::IAM::Policy" &&
          (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId),
      )
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    const allows = (action: string, resourceId: string) =>
      granted.some(
        (st) =>
          st.Effect === "Allow" &&
          [st.Action].flat().some((a) => like(a, action)) &&
          JSON.stringify(st.Resource).includes(`"${resourceId}"`),
      );
    expect(allows("sns:Publish", topicId), "sns:Publish on the topic").toBe(true);
    const keyId = (resources[topicId]!.Properties.KmsMasterKeyId as { "Fn::GetAtt": string[] })[
      "Fn::GetAtt"
    ][0]!;
    for (const action of ["kms:Decrypt", "kms:GenerateDataKey"])
      expect(allows(action, keyId), `${action} on the topic's key`).toBe(true);
    // The key lets the account's IAM policies grant it (so the role's grant counts).
    const keyStatements = (resources[keyId]!.Properties.KeyPolicy as { Statement: Statement[] }).Statement;
    expect(JSON.stringify(keyStatements)).toMatch(/:root"/);
    // The topic's policy denies nothing a TLS request from the role sends.
    const topicStatements = Object.values(resources)
      .filter(
        (r) => r.Type === "AWS::SNS::TopicPolicy" && JSON.stringify(r.Properties.Topics).includes(topicId),
      )
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    for (const st of topicStatements.filter((t) => t.Effect === "Deny"))
      expect(JSON.stringify(st.Condition), "only plain HTTP is denied").toContain("aws:SecureTransport");
    // Each warning's name matches the rule: its transitions go out, once each.
    const prefix = (rule.Properties.EventPattern as { detail: { alarmName: { prefix: string }[] } }).detail
      .alarmName[0]!.prefix;
    const warnings = alarms().filter(([, a]) => a.Properties.AlarmActions === undefined);
    expect(warnings.length).toBeGreaterThan(10);
    for (const [id, a] of warnings)
      expect(String(a.Properties.AlarmName), id).toMatch(new RegExp(`^${prefix}`));
    expect(ruleId).toBeDefined();
  });

  it("refuses an alarm of another stack or account: the grants are conditioned on both", () => {
    const [, alarm] = notifying()[0]!;
    const topic = ((alarm.Properties.AlarmActions as { Ref: string }[])[0] as { Ref: string }).Ref;
    expect(undeliverable(topic, "arn:aws:cloudwatch:us-east-1:123456789012:alarm:OtherStack-Alarm")).toMatch(
      /does not let CloudWatch publish/,
    );
    expect(
      undeliverable(topic, `arn:aws:cloudwatch:us-east-1:999999999999:alarm:${alarm.Properties.AlarmName}`),
    ).toBeDefined();
  });

  it("notifies on every alarm's way into ALARM and back to OK, itself or through a composite alarm", () => {
    const spoken = inNotifyingComposite();
    expect(spoken.size).toBeGreaterThan(10);
    for (const [id, alarm] of alarms()) {
      if (alarm.Properties.AlarmActions === undefined) {
        expect(spoken.has(id), `${id} has no actions and no composite alarm speaks for it`).toBe(true);
        continue;
      }
      expect(alarm.Properties.AlarmActions, id).toHaveLength(1);
      expect(alarm.Properties.OKActions, id).toEqual(alarm.Properties.AlarmActions);
    }
  });
});

describe("the alarms on-call reads", () => {
  it("raises alarms on dead letters, message age, endpoint errors and latency, the escalation rate, each policy's review wait and error budget", () => {
    // The alarms that notify on their own (not the scaling policies' alarms).
    const alarms = Object.values(
      template.findResources("AWS::CloudWatch::Alarm") as Record<string, Resource>,
    ).filter((a) => a.Properties.AlarmActions !== undefined && !drivesScaling(a));
    // Two per dead-letter queue, rejected items, the escalation rate, events refused at their
    // record (forged), one review service-level alarm per policy (three samples), two
    // error-budget alarms (over it; too few labels to judge it) per policy that sets maxAutoError
    // (ticket-routing), the async lane's seven (oldest request, wake-up, failed invocations,
    // failed notifications, expired requests, the oldest open batch object, the notifications
    // queue's oldest message); and the critical health alarms: the endpoint failing (its failures,
    // a fleet refusing nearly every call), the intake not draining (its oldest item, items in
    // flight) and table throttling (the table, each index). The warnings notify through the composite.
    const critical = 2 + 2 + 1 + DECISIONS_TABLE_SCHEMA.indexes.length;
    expect(alarms).toHaveLength(2 * Object.keys(DEAD_LETTER_SOURCES).length + 8 + 7 + critical);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
    // content-moderation asks for review within 60 minutes; the others take the default.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "OldestPendingReviewMinutes",
      Dimensions: Match.arrayWith([{ Name: "policy", Value: "content-moderation" }]),
      Threshold: 60,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "OldestPendingReviewMinutes",
      Dimensions: Match.arrayWith([{ Name: "policy", Value: "ticket-routing" }]),
      Threshold: 240,
    });
    // Endpoint errors: the decide function's count of failures that are not overload refusals.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: METRICS.endpointFailures,
      Namespace: METRICS.namespace,
    });
    // The intake's oldest item: the larger of SQS's figure and the decide function's.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "MAX([queued, FILL(received, 0)])" }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({ MetricName: METRICS.oldestItemAgeSeconds }),
          }),
        }),
      ]),
      Threshold: 900,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([Match.objectLike({ Expression: Match.stringLikeRegexp("human") })]),
    });
    // Over budget with evidence: the lower end of the interval above the budget.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: METRICS.autoErrorLowerBound,
      Dimensions: Match.arrayWith([{ Name: "policy", Value: "ticket-routing" }]),
      Threshold: 0.05,
      ComparisonOperator: "GreaterThanThreshold",
      TreatMissingData: "notBreaching",
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: METRICS.auditInconclusive,
      Dimensions: Match.arrayWith([{ Name: "policy", Value: "ticket-routing" }]),
      Threshold: 1,
    });
    template.resourceCountIs("AWS::CloudWatch::Dashboard", 1);
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 day)" });
  });
});
