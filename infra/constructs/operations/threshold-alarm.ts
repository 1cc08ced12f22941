/**
 * One way to write an alarm: a metric above a threshold for some periods, with what missing data
 * means said explicitly (a metric that stops is quiet for an error count, a breach for a service
 * level whose publisher has died).
 */
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type { Construct } from "constructs";

/** What one threshold alarm watches and says. */
export interface ThresholdAlarmSpec {
  readonly metric: cloudwatch.IMetric;
  /** Alarms above this value (at or above with `atLeast`). */
  readonly threshold: number;
  readonly description: string;
  /** Consecutive periods above the threshold. @default 1 */
  readonly evaluationPeriods?: number;
  /** Of those periods, how many must be above it. @default every one */
  readonly datapointsToAlarm?: number;
  /** Alarm at the threshold itself, not only above it. @default false */
  readonly atLeast?: boolean;
  /** Missing data counts as a breach: for metrics that must keep arriving. @default false */
  readonly missingDataBreaches?: boolean;
}

/** An alarm that fires when `metric` is above the threshold. */
export function thresholdAlarm(scope: Construct, id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    metric: spec.metric,
    threshold: spec.threshold,
    evaluationPeriods: spec.evaluationPeriods ?? 1,
    ...(spec.datapointsToAlarm ? { datapointsToAlarm: spec.datapointsToAlarm } : {}),
    comparisonOperator: spec.atLeast
      ? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
      : cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: spec.missingDataBreaches
      ? cloudwatch.TreatMissingData.BREACHING
      : cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: spec.description,
  });
}
