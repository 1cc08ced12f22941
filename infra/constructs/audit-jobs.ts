/**
 * Live audits: the daily Audit function (each policy's rate of wrong automatic actions from its
 * audit samples, published as metrics) and one alarm per policy that sets an error budget
 * (`maxAutoError`): it fires when the estimate's upper bound passes the budget. The function is
 * invoked asynchronously by its schedule, with bounded retries and an on-failure destination.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Aspects, Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { AUDIT, METRICS, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import { FunctionFindings, functionFactory } from "./pipeline-function.ts";
import { thresholdAlarm } from "./threshold-alarm.ts";

/**
 * Each policy's error budget (its latest deciding version's `maxAutoError`), read from the
 * bundled policy files at synth time: one alarm per policy that sets one.
 */
export function autoErrorBudgets(dir: string): Record<string, number> {
  const latest = new Map<string, { version: number; budget: number | undefined }>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const policy = parsePolicy(JSON.parse(readFileSync(join(dir, file), "utf8")), file);
    if (!policy.candidate && (latest.get(policy.id)?.version ?? 0) < policy.version)
      latest.set(policy.id, { version: policy.version, budget: policy.maxAutoError });
  }
  return Object.fromEntries(
    [...latest].flatMap(([id, { budget }]) => (budget === undefined ? [] : [[id, budget]])),
  );
}

/** Properties of {@link AuditJobs}. */
export interface AuditJobsProps {
  readonly table: dynamodb.Table;
  /** The pipeline's event bus (the shared function settings name it; the function publishes nothing). */
  readonly busName: string;
  /**
   * Where the budget alarms notify, into ALARM and back to OK (the operations' alarm topic, whose
   * grants cover only alarms it names: `Operations.notify`).
   */
  readonly alarms: { notify<T extends cloudwatch.Alarm>(alarm: T): T };
  /** The health composite the function's errors and throttles join (`Operations.health`). */
  readonly health: { add(alarm: cloudwatch.IAlarm): void };
  /** Where failed runs land. */
  readonly failures: sqs.IQueue;
  /** Error budget per policy id (see {@link autoErrorBudgets}). One alarm per entry. */
  readonly budgets: Readonly<Record<string, number>>;
  /** Folder whose *.json policies are bundled with the function. @default events/policies */
  readonly policiesDir?: string;
}

/** The daily audit estimate and the error-budget alarms. */
export class AuditJobs extends Construct {
  public readonly auditFunction: NodejsFunction;
  /** One alarm per policy with a budget: the estimate's upper bound passed it. */
  public readonly budgetAlarms: Record<string, cloudwatch.Alarm>;

  constructor(scope: Construct, id: string, props: AuditJobsProps) {
    super(scope, id);
    const fn = functionFactory(this, {
      table: props.table,
      environment: {
        DECISIONS_TABLE: props.table.tableName,
        EVENT_BUS_NAME: props.busName,
        POLICIES_DIR: "/var/task/policies",
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        POWERTOOLS_LOG_LEVEL: "INFO",
      },
      ...(props.policiesDir ? { policiesDir: props.policiesDir } : {}),
    });
    this.auditFunction = fn("Audit", "audit.ts", {
      memoryMiB: 512,
      timeoutSeconds: 300,
      environment: { AUDIT_WINDOW_DAYS: String(AUDIT.windowDays) },
      tableAccess: TABLE_ACCESS.Audit,
    });
    // A daily job may retry twice within six hours, like the other daily jobs.
    this.auditFunction.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new destinations.SqsDestination(props.failures),
    });
    new events.Rule(this, "AuditSchedule", {
      description: "Daily estimate of each policy's rate of wrong automatic actions from audit samples",
      schedule: events.Schedule.rate(Duration.days(1)),
      targets: [
        new targets.LambdaFunction(this.auditFunction, { retryAttempts: 2, deadLetterQueue: props.failures }),
      ],
    });
    Aspects.of(this).add(new FunctionFindings());

    const sum = { period: Duration.minutes(5), statistic: "Sum" } as const;
    props.health.add(
      thresholdAlarm(this, "AuditErrors", {
        metric: this.auditFunction.metricErrors(sum),
        threshold: 0,
        description: "The audit function fails: the error-budget alarms get no estimate",
      }),
    );
    props.health.add(
      thresholdAlarm(this, "AuditThrottles", {
        metric: this.auditFunction.metricThrottles(sum),
        threshold: 0,
        description: "The audit function is throttled (the account's or its own concurrency is used up)",
      }),
    );

    this.budgetAlarms = Object.fromEntries(
      Object.entries(props.budgets).map(([policyId, budget], i) => {
        const alarm = thresholdAlarm(this, `AutoErrorBudget${i}`, {
          metric: new cloudwatch.Metric({
            namespace: METRICS.namespace,
            metricName: METRICS.autoErrorUpperBound,
            dimensionsMap: { service: METRICS.service.audit, [METRICS.policyDimension]: policyId },
            statistic: "Maximum",
            period: Duration.days(1),
          }),
          threshold: budget,
          // No estimate (no audit label yet) is not a breach: the label count metric shows it.
          description: `The ${Math.round(AUDIT.confidence * 100)}% upper bound on ${policyId}'s rate of wrong automatic actions passed its maxAutoError ${budget}: check the audit report (decide audit) before automating more`,
        });
        // Told both ways: into ALARM, and back to OK once the bound is under the budget again.
        return [policyId, props.alarms.notify(alarm)];
      }),
    );
  }
}
