/**
 * The async lane's alarms, each notifying the alarm topic (into ALARM and back to OK):
 *
 * - the oldest queued request has waited past `oldestRequestMinutes` (the endpoint is at its
 *   maximum, or stuck);
 * - a backlog has stood without any instance for `wakeUpMinutes` (the wake-up from zero did not
 *   happen: the step policy, the instance quota, or a container that never passes /ping);
 * - invocations failed, or SageMaker could not publish a notification (the lane would never hear
 *   of that object);
 * - requests expired in SageMaker's queue (`ExpiredRequests`: past the request TTL, each a failed
 *   try the result step makes again), and the oldest open object (handed to SageMaker, not yet
 *   settled: `AsyncOldestOpenObjectAgeSeconds`, which the lane's functions publish by lane) older
 *   than the hold-back's budget (the TTL over the sizing margin), a live one (`-c
 *   endpointMode=async`) older than `intakeOpenObjectMinutes`;
 * - the notifications queue's oldest message past two visibility timeouts (one failed try waits
 *   out one): the result function is not settling objects;
 * - under `-c endpointMode=async`, the intake queue's own oldest message (the decide function's
 *   metric the Operations alarm also reads does not exist there);
 * and the submit and result functions' errors and throttles as health signals (the composite).
 * The notifications' dead-letter queue has the alarms every dead-letter source has (`operations.ts`).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import { Construct } from "constructs";
import {
  ASYNC_LANE,
  ASYNC_METRICS,
  ASYNC_RESULTS_VISIBILITY_SECONDS,
  type AsyncSource,
  METRICS,
  ON_CALL_ALARMS,
  SIZING_MARGIN,
} from "../../../shared/domain/topology.ts";
import type { Operations } from "../operations/operations.ts";
import { thresholdAlarm } from "../operations/threshold-alarm.ts";
import type { AsyncDecisionEndpoint } from "./async-endpoint.ts";
import type { AsyncLane } from "./async-lane.ts";
import { asyncEndpointMetric } from "./async-scaling.ts";

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
  public readonly expiredRequests: cloudwatch.Alarm;
  /** The oldest open object's age, by the lanes the endpoint serves. */
  public readonly oldestOpenObject: Partial<Record<AsyncSource, cloudwatch.Alarm>>;
  /** The notifications queue's oldest message: the result function is not settling objects. */
  public readonly notificationsAge: cloudwatch.Alarm;
  /** The live intake's own queue age (`-c endpointMode=async` only). */
  public readonly intakeQueueAge: cloudwatch.Alarm | undefined;

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
    this.expiredRequests = notify("ExpiredRequests", {
      metric: variantMetric("ExpiredRequests"),
      threshold: 0,
      description: `Objects waited past SageMaker's ${ASYNC_LANE.requestTtlSeconds / 3600}-hour request TTL: each is tried again, then its items are dead-lettered. More was handed over than the maximum instances answer in time (-c asyncMaxInstanceCount), or the endpoint is stuck`,
    });
    this.oldestOpenObject = this.openObjectAlarms(lane, notify);
    this.intakeQueueAge = lane.intakeQueue
      ? notify("IntakeQueueAge", {
          metric: lane.intakeQueue.metricApproximateAgeOfOldestMessage({
            period: Duration.minutes(5),
            statistic: "Maximum",
          }),
          threshold: ON_CALL_ALARMS.oldestMessageMinutes.intake * 60,
          description: `Live items have waited ${ON_CALL_ALARMS.oldestMessageMinutes.intake} minutes on the intake queue before the submit step handed them to the async endpoint`,
        })
      : undefined;
    this.notificationsAge = notify("NotificationsQueueAge", {
      metric: lane.notifications.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
      threshold: 2 * ASYNC_RESULTS_VISIBILITY_SECONDS,
      description: `A notification of the async endpoint has waited ${(2 * ASYNC_RESULTS_VISIBILITY_SECONDS) / 60} minutes (two visibility timeouts: one failed try waits out one) for the result function: its object's items are not being settled`,
    });
    for (const [name, fn] of [
      ["AsyncSubmit", lane.submitFunction],
      ["AsyncResults", lane.resultsFunction],
    ] as const)
      this.functionSignals(name, fn, operations);
  }

  /** The oldest open object of each lane the endpoint serves: the batch's past the hold-back's budget, a live one's in minutes. */
  private openObjectAlarms(
    lane: AsyncLane,
    notify: (alarmId: string, spec: Parameters<typeof thresholdAlarm>[2]) => cloudwatch.Alarm,
  ): Partial<Record<AsyncSource, cloudwatch.Alarm>> {
    const budget = ASYNC_LANE.requestTtlSeconds / SIZING_MARGIN;
    const limits: (readonly [AsyncSource, number, string])[] = [
      [
        "batch",
        budget,
        `the submit step's budget (the ${ASYNC_LANE.requestTtlSeconds / 3600}-hour request TTL over the sizing margin ${SIZING_MARGIN})`,
      ],
      ...(lane.intakeQueue
        ? ([
            [
              "intake",
              ASYNC_LANE.alarms.intakeOpenObjectMinutes * 60,
              "what a wake-up from zero and one object's run take",
            ],
          ] as const)
        : []),
    ];
    return Object.fromEntries(
      limits.map(([source, threshold, why]) => [
        source,
        notify(`OldestOpenObject-${source}`, {
          metric: new cloudwatch.Metric({
            namespace: METRICS.namespace,
            metricName: ASYNC_METRICS.oldestOpenObjectAgeSeconds,
            dimensionsMap: {
              service: ASYNC_METRICS.service.submit,
              [METRICS.laneDimension]: METRICS.lanes[source],
            },
            statistic: "Maximum",
            period: Duration.minutes(5),
          }),
          threshold,
          description: `An open ${source} object (handed to the async endpoint, not yet settled) is older than ${Math.round(threshold / 60)} minutes, ${why}: it is stuck, or the endpoint is slower than the hold-back assumes (npx decide status lists the open objects)`,
        }),
      ]),
    );
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
