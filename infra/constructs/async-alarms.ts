/**
 * The async lane's alarms, each notifying the alarm topic (into ALARM and back to OK):
 *
 * - the oldest queued request has waited past `oldestRequestMinutes` (the endpoint is at its
 *   maximum, or stuck);
 * - a backlog has stood without any instance for `wakeUpMinutes` (the wake-up from zero did not
 *   happen: the step policy, the instance quota, or a container that never passes /ping);
 * - invocations failed, or SageMaker could not publish a notification (the lane would never hear
 *   of that object);
 * and the submit and result functions' errors and throttles as health signals (the composite).
 * The notifications' dead-letter queue has the alarms every dead-letter source has (`operations.ts`).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import type { AsyncDecisionEndpoint } from "./async-endpoint.ts";
import type { AsyncLane } from "./async-lane.ts";
import { asyncEndpointMetric } from "./async-scaling.ts";
import type { Operations } from "./operations.ts";
import { thresholdAlarm } from "./threshold-alarm.ts";

/** Properties of {@link AsyncLaneAlarms}. */
export interface AsyncLaneAlarmsProps {
  readonly endpoint: AsyncDecisionEndpoint;
  readonly lane: AsyncLane;
  readonly operations: Operations;
}

/** The alarms, by name. */
export class AsyncLaneAlarms extends Construct {
  public readonly oldestRequest: cloudwatch.Alarm;
  public readonly wakeUp: cloudwatch.Alarm;
  public readonly failedInvocations: cloudwatch.Alarm;
  public readonly notificationFailures: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: AsyncLaneAlarmsProps) {
    super(scope, id);
    const { endpoint, lane, operations } = props;
    const alarms = ASYNC_LANE.alarms;
    const notify = (alarmId: string, spec: Parameters<typeof thresholdAlarm>[2]) =>
      operations.notify(thresholdAlarm(this, alarmId, spec));
    this.oldestRequest = notify("OldestRequest", {
      metric: asyncEndpointMetric(
        endpoint.endpointName,
        "ApproximateAgeOfOldestRequest",
        "Maximum",
        Duration.minutes(5),
      ),
      threshold: alarms.oldestRequestMinutes * 60,
      description: `An object has waited more than ${alarms.oldestRequestMinutes} minutes on the async endpoint: it is at its maximum (-c asyncMaxInstanceCount) or stuck`,
    });
    this.wakeUp = notify("WakeUp", {
      metric: asyncEndpointMetric(endpoint.endpointName, "HasBacklogWithoutCapacity", "Average"),
      threshold: 1,
      atLeast: true,
      evaluationPeriods: alarms.wakeUpMinutes,
      description: `Objects have waited ${alarms.wakeUpMinutes} minutes on the async endpoint with no instance running: the wake-up from zero did not happen (its step policy, the instance quota, or a container that never passes /ping)`,
    });
    const variantMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: "AWS/SageMaker",
        metricName,
        dimensionsMap: { EndpointName: endpoint.endpointName, VariantName: endpoint.variantName },
        statistic: "Sum",
        period: Duration.seconds(alarms.failedInvocationsPeriodSeconds),
      });
    this.failedInvocations = notify("FailedInvocations", {
      metric: variantMetric("InvocationFailures"),
      threshold: 0,
      description:
        "Async invocations failed: each failed object is invoked again, then its items are dead-lettered (npx decide replay --from batch)",
    });
    this.notificationFailures = notify("NotificationFailures", {
      metric: variantMetric("NotificationFailures"),
      threshold: 0,
      description:
        "SageMaker could not publish an async notification: the result function never hears of that object (npx decide status lists the open objects)",
    });
    for (const [name, fn] of [
      ["AsyncSubmit", lane.submitFunction],
      ["AsyncResults", lane.resultsFunction],
    ] as const)
      this.functionSignals(name, fn, operations);
  }

  /** A function's errors and throttles, as health signals. */
  private functionSignals(name: string, fn: NodejsFunction, operations: Operations): void {
    const period = { period: Duration.minutes(5), statistic: "Sum" } as const;
    operations.health.add(
      thresholdAlarm(this, `${name}Errors`, {
        metric: fn.metricErrors(period),
        threshold: 0,
        description: `The ${name} function failed`,
      }),
    );
    operations.health.add(
      thresholdAlarm(this, `${name}Throttles`, {
        metric: fn.metricThrottles(period),
        threshold: 0,
        description: `The ${name} function was throttled`,
      }),
    );
  }
}
