/**
 * The live-audit construct on its own: a daily, retried Audit function that may only query the
 * table, and two error-budget alarms per policy that sets `maxAutoError` (the latest deciding
 * version's; a candidate version never sets the budget): over budget on the lower bound the
 * function emits, and not enough audit labels to judge it.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as kms from "aws-cdk-lib/aws-kms";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { describe, expect, it } from "vitest";
import { AuditJobs, autoErrorBudgets } from "../../infra/constructs/audit-jobs.ts";
import { AlarmTopic } from "../../infra/constructs/operations/alarm-topic.ts";
import { calibrationSha256, policyTextSha256 } from "../../shared/domain/calibration/provenance.ts";
import { CERTIFICATE_METHOD } from "../../shared/domain/policy/certificate-schema.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { AUDIT, METRICS } from "../../shared/domain/topology.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const policy = (id: string, version: number, extra: Record<string, unknown> = {}) => ({
  ...TEAMS_POLICY,
  id,
  version,
  ...extra,
});

describe("AuditJobs", () => {
  it("reads each policy's budget from its latest deciding version, never from a candidate", async () => {
    const dir = await mkdtemp(join(tmpdir(), "budgets-"));
    await writeFile(join(dir, "a.v1.json"), JSON.stringify(policy("a", 1, { maxAutoError: 0.05 })));
    await writeFile(join(dir, "a.v2.json"), JSON.stringify(policy("a", 2, { maxAutoError: 0.02 })));
    await writeFile(
      join(dir, "a.v3.json"),
      JSON.stringify(policy("a", 3, { candidate: true, maxAutoError: 0.5 })),
    );
    await writeFile(join(dir, "b.v1.json"), JSON.stringify(policy("b", 1)));
    // A certified version without maxAutoError is watched against its certificate's own target.
    const certified = policy("c", 1);
    const certificate = {
      maxError: 0.03,
      confidence: 0.95,
      method: CERTIFICATE_METHOD,
      threshold: certified.autoThreshold,
      bound: 0.0299,
      automated: 99,
      errors: 0,
      labels: 200,
      coverage: 0.495,
      modelSha256: null,
      promptVersion: null,
      policySha256: policyTextSha256(parsePolicy(certified)),
      calibrationSha256: calibrationSha256(parsePolicy(certified)),
      labelsSha256: "c".repeat(64),
      certifiedAt: "2026-12-01T00:00:00.000Z",
    };
    await writeFile(join(dir, "c.v1.json"), JSON.stringify({ ...certified, certificate }));
    await writeFile(
      join(dir, "d.v1.json"),
      JSON.stringify({ ...policy("d", 1), certificate: { ...certificate, threshold: null, bound: null } }),
    );
    expect(autoErrorBudgets(dir)).toEqual({ a: 0.02, c: 0.03 });
  });

  it("runs the audit daily with bounded retries, table queries only, and alarms (and clears) on each budget", () => {
    const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
    const stack = new Stack(app, "AuditJobsTest");
    const table = new dynamodb.Table(stack, "Table", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
    });
    // The function's health signals join a composite alarm: here, a list.
    const signals: cloudwatch.IAlarm[] = [];
    new AuditJobs(stack, "Audits", {
      table,
      busName: "bus",
      alarms: new AlarmTopic(stack, "Alarms", { key: new kms.Key(stack, "Key") }),
      health: { add: (alarm) => signals.push(alarm) },
      failures: new sqs.Queue(stack, "Failures"),
      budgets: { a: 0.02 },
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ AUDIT_WINDOW_DAYS: String(AUDIT.windowDays) }) },
    });
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(1 day)" });
    template.hasResourceProperties("AWS::Lambda::EventInvokeConfig", {
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: Match.anyValue() },
    });
    const actions = JSON.stringify(template.findResources("AWS::IAM::Policy"));
    expect(actions).toContain("dynamodb:Query");
    expect(actions).not.toMatch(/dynamodb:(PutItem|UpdateItem|GetItem|Scan)/);
    // The two budget alarms notify themselves; the function's errors and throttles join the composite.
    expect(signals).toHaveLength(2);
    const notifying = Object.values(template.findResources("AWS::CloudWatch::Alarm")).filter(
      (a) => a.Properties.AlarmActions !== undefined,
    );
    expect(notifying).toHaveLength(2);
    const dimensions = Match.arrayWith([
      { Name: METRICS.policyDimension, Value: "a" },
      { Name: "service", Value: METRICS.service.audit },
    ]);
    // Over budget reads the lower end of the interval: evidence of a breach, not its absence.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Namespace: METRICS.namespace,
      MetricName: METRICS.autoErrorLowerBound,
      Dimensions: dimensions,
      ComparisonOperator: "GreaterThanThreshold",
      Threshold: 0.02,
      Period: 86_400,
      AlarmActions: [Match.anyValue()],
      AlarmName: Match.stringLikeRegexp("^AuditJobsTest-"),
    });
    // Too few labels to judge (none at all included) fires too: the budget is unwatched.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: METRICS.auditInconclusive,
      Dimensions: dimensions,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      Threshold: 1,
      AlarmActions: [Match.anyValue()],
    });
    for (const alarm of notifying) expect(alarm.Properties.OKActions).toEqual(alarm.Properties.AlarmActions);
  });
});
