/**
 * Live audits: the daily Audit function (each policy's rate of wrong automatic actions from its
 * audit samples, published as metrics) and two alarms per policy that has an error budget
 * (`maxAutoError`, else the target of the certificate it acts under): over budget (the interval's lower end is above it) and not enough audit
 * labels to judge it. The function is
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
import { budgetOf } from "../../shared/domain/audit/policy-audit.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { AUDIT, METRICS, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import { thresholdAlarm } from "./operations/threshold-alarm.ts";
import { FunctionFindings, functionFactory } from "./pipeline-function.ts";

/**
 * Each policy's error budget (its latest deciding version's `maxAutoError`, else its certificate's
 * target: `budgetOf`), read from the bundled policy files at synth time: one alarm per policy
 * that has one.
 */
export function autoErrorBudgets(dir: string): Record<string, number> {
  const latest = new Map<string, { version: number; budget: number | undefined }>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const policy = parsePolicy(JSON.parse(readFileSync(join(dir, file), "utf8")), file);
    if (!policy.candidate && (latest.get(policy.id)?.version ?? 0) < policy.version)
      latest.set(policy.id, { version: policy.version, budget: budgetOf(policy)?.target });
  }
  return Object.fromEntries(
    [...latest].flatMap(([id, { budget }]) => (budget === undefined ? [] : [[id, budget]])),
  );
}

/** One policy's audit metric, as the daily function publishes it. */
function perPolicy(metricName: string, policyId: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { service: METRICS.service.audit, [METRICS.policyDimension]: policyId },
    statistic: "Maximum",
    period: Duration.days(1),
  });
}

/** The two alarms of one policy's budget: over it with evidence, and too few labels to judge it. */
function budgetAlarms(
  scope: Construct,
  i: number,
  policyId: string,
  budget: number,
): [cloudwatch.Alarm, cloudwatch.Alarm] {
  const level = `${Math.round(AUDIT.confidence * 100)}%`;
  return [
    // Over budget needs evidence: the lower end of the interval above the budget. A policy
    // exactly at its budget trips it in at most (1 - confidence) / 2 of daily windows.
    thresholdAlarm(scope, `AutoErrorBudget${i}`, {
      metric: perPolicy(METRICS.autoErrorLowerBound, policyId),
      threshold: budget,
      description: `The lower end of the ${level} interval on ${policyId}'s rate of wrong automatic actions is above its error budget ${budget} (maxAutoError, else its certificate's target): the policy is over its budget; check the audit report (decide audit) and send more to people`,
    }),
    // Too few audit labels to say either way (none at all included): the budget is unwatched.
    thresholdAlarm(scope, `AuditInconclusive${i}`, {
      metric: perPolicy(METRICS.auditInconclusive, policyId),
      threshold: 1,
      atLeast: true,
      description: `${policyId}'s audit labels are too few to say whether it is within its error budget ${budget}: decide audit says how many more per band would settle it (label the waiting samples, or raise the audit rate)`,
    }),
  ];
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
  /** Error budget per policy id (see {@link autoErrorBudgets}). Two alarms per entry. */
  readonly budgets: Readonly<Record<string, number>>;
  /** Folder whose *.json policies are bundled with the function. @default events/policies */
  readonly policiesDir?: string;
}

/** The daily audit estimate and the error-budget alarms. */
export class AuditJobs extends Construct {
  public readonly auditFunction: NodejsFunction;
  /** One alarm per policy with a budget: over it with evidence (the interval's lower end above it). */
  public readonly budgetAlarms: Record<string, cloudwatch.Alarm>;
  /** One alarm per policy with a budget: its audit labels are too few to judge it. */
  public readonly inconclusiveAlarms: Record<string, cloudwatch.Alarm>;

  constructor(scope: Construct, id: string, props: AuditJobsProps) {
    super(scope, id);
    const fn = functionFactory(this, {
      table: props.table,
      environment: {
        [FUNCTION_ENV.DECISIONS_TABLE]: props.table.tableName,
        [FUNCTION_ENV.EVENT_BUS_NAME]: props.busName,
        [FUNCTION_ENV.POLICIES_DIR]: "/var/task/policies",
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        POWERTOOLS_LOG_LEVEL: "INFO",
      },
      ...(props.policiesDir ? { policiesDir: props.policiesDir } : {}),
    });
    this.auditFunction = fn("Audit", "audit.ts", {
      memoryMiB: 512,
      timeoutSeconds: 300,
      environment: { [FUNCTION_ENV.AUDIT_WINDOW_DAYS]: String(AUDIT.windowDays) },
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

    this.budgetAlarms = {};
    this.inconclusiveAlarms = {};
    for (const [i, [policyId, budget]] of Object.entries(props.budgets).entries()) {
      const [over, inconclusive] = budgetAlarms(this, i, policyId, budget);
      // Told both ways: into ALARM, and back to OK once the evidence says otherwise.
      this.budgetAlarms[policyId] = props.alarms.notify(over);
      this.inconclusiveAlarms[policyId] = props.alarms.notify(inconclusive);
    }
  }
}
