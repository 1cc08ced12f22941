/**
 * Operations: alarms on the dead-letter queue, the age of the oldest intake message, endpoint
 * errors and latency, the escalation rate and each policy's review service level, sent to an
 * encrypted SNS topic, and a dashboard.
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import * as kms from "aws-cdk-lib/aws-kms";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct } from "constructs";
import { METRICS } from "../../shared/domain/topology.ts";
import type { DecisionPipeline } from "./decision-pipeline.ts";

/** Properties of {@link Operations}. */
export interface OperationsProps {
  readonly pipeline: DecisionPipeline;
  readonly endpointName: string;
  /** Where alarms are emailed. @default no subscription (subscribe to the topic yourself) */
  readonly alarmEmail?: string;
  /** Age of the oldest intake message that raises the alarm. @default 15 minutes */
  readonly maxMessageAge?: Duration;
  /** Share of decisions escalated to people that raises the alarm. @default 0.5 */
  readonly maxEscalationRate?: number;
  /** p90 model latency that raises the alarm. @default 10 seconds */
  readonly maxModelLatency?: Duration;
  /**
   * Review service level per policy id: minutes the oldest pending item may wait (the policy's
   * `reviewWithinMinutes`, else the default). One alarm per entry.
   */
  readonly reviewServiceLevels?: Readonly<Record<string, number>>;
}

/** Alarms and dashboard for the pipeline and its endpoint. */
export class Operations extends Construct {
  public readonly topic: sns.Topic;
  public readonly alarms: Record<
    | "deadLetters"
    | "targetDeadLetters"
    | "autoActionDeadLetters"
    | "batchFilesDeadLetters"
    | "rejectedItems"
    | "oldestMessage"
    | "endpointErrors"
    | "modelLatency"
    | "escalationRate",
    cloudwatch.Alarm
  >;
  public readonly dashboard: cloudwatch.Dashboard;
  /** One alarm per policy: its oldest pending review has waited past the policy's limit. */
  public readonly reviewAlarms: Record<string, cloudwatch.Alarm>;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { pipeline } = props;
    this.topic = new sns.Topic(this, "Alarms", {
      masterKey: new kms.Key(this, "AlarmsKey", { enableKeyRotation: true }),
      enforceSSL: true,
    });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));

    const endpointMetric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: "AWS/SageMaker",
        metricName,
        dimensionsMap: { EndpointName: props.endpointName, VariantName: "AllTraffic" },
        statistic,
        period: Duration.minutes(5),
      });
    const pipelineMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap: { service: METRICS.service.decide },
        statistic: "Sum",
        period: Duration.minutes(15),
      });
    const escalation = new cloudwatch.MathExpression({
      expression: "IF((auto + human) > 0, human / (auto + human), 0)",
      usingMetrics: { auto: pipelineMetric("routed_auto"), human: pipelineMetric("routed_human") },
      label: "escalation rate",
      period: Duration.minutes(15),
    });

    const alarm = (
      name: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      description: string,
      evaluationPeriods = 1,
    ) => {
      const created = new cloudwatch.Alarm(this, name, {
        metric,
        threshold,
        evaluationPeriods,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      created.addAlarmAction(new actions.SnsAction(this.topic));
      return created;
    };
    this.alarms = {
      deadLetters: alarm(
        "DeadLetters",
        pipeline.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        0,
        "Items are in the dead-letter queue: fix the cause, then run decide replay",
      ),
      // Queues nothing consumes are for inspection: each alarms as soon as it holds a message.
      targetDeadLetters: alarm(
        "TargetDeadLetters",
        pipeline.targetsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        0,
        "Events could not be delivered to a rule target, or the review intake or drift check kept failing",
      ),
      autoActionDeadLetters: alarm(
        "AutoActionDeadLetters",
        pipeline.autoActionDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        0,
        "Confident decisions were not applied: fix the cause, then redrive the auto-action dead-letter queue",
      ),
      batchFilesDeadLetters: alarm(
        "BatchFilesDeadLetters",
        pipeline.batchFilesDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        0,
        "A batch's results files could not be written: fix the cause, then redrive the batch files dead-letter queue",
      ),
      rejectedItems: alarm(
        "RejectedItems",
        pipeline.rejectedQueue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        Duration.days(1).toSeconds(),
        "Rejected items have waited a day for inspection",
      ),
      oldestMessage: alarm(
        "OldestMessage",
        pipeline.intakeQueue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        (props.maxMessageAge ?? Duration.minutes(15)).toSeconds(),
        "Items wait too long for a decision: the endpoint or the decide function is behind",
      ),
      endpointErrors: alarm(
        "EndpointErrors",
        endpointMetric("Invocation5XXErrors", "Sum"),
        0,
        "The decision endpoint answers with errors",
        2,
      ),
      modelLatency: alarm(
        "ModelLatency",
        endpointMetric("ModelLatency", "p90"),
        (props.maxModelLatency ?? Duration.seconds(10)).toMilliseconds() * 1000,
        "p90 model latency is high (SageMaker reports microseconds)",
        3,
      ),
      escalationRate: alarm(
        "EscalationRate",
        escalation,
        props.maxEscalationRate ?? 0.5,
        "An unusual share of decisions goes to people: check calibration and the input mix",
        2,
      ),
    };

    const backlogMetric = (metricName: string, policyId: string) =>
      new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName,
        dimensionsMap: { service: METRICS.service.reviewBacklog, [METRICS.policyDimension]: policyId },
        statistic: "Maximum",
        period: Duration.minutes(5),
      });
    const levels = Object.entries(props.reviewServiceLevels ?? {});
    this.reviewAlarms = Object.fromEntries(
      levels.map(([policyId, minutes], i) => [
        policyId,
        alarm(
          `ReviewServiceLevel${i}`,
          backlogMetric(METRICS.oldestPendingReviewMinutes, policyId),
          minutes,
          `Escalated ${policyId} items have waited more than ${minutes} minutes for a reviewer`,
        ),
      ]),
    );

    this.dashboard = new cloudwatch.Dashboard(this, "Dashboard", {
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: "Queues",
            left: [
              pipeline.intakeQueue.metricApproximateNumberOfMessagesVisible(),
              pipeline.deadLetterQueue.metricApproximateNumberOfMessagesVisible(),
              pipeline.reviewQueue.metricApproximateNumberOfMessagesVisible(),
              pipeline.autoActionQueue.metricApproximateNumberOfMessagesVisible(),
            ],
            right: [pipeline.intakeQueue.metricApproximateAgeOfOldestMessage()],
          }),
          new cloudwatch.GraphWidget({
            title: "Routing",
            left: [
              pipelineMetric("routed_auto"),
              pipelineMetric("routed_human"),
              pipelineMetric("items_rejected"),
            ],
            right: [escalation],
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: "Endpoint",
            left: [endpointMetric("Invocations", "Sum"), endpointMetric("Invocation5XXErrors", "Sum")],
            right: [endpointMetric("ModelLatency", "p50"), endpointMetric("ModelLatency", "p90")],
          }),
          new cloudwatch.GraphWidget({
            title: "Decide function",
            left: [pipeline.decideFunction.metricInvocations(), pipeline.decideFunction.metricErrors()],
            right: [pipeline.decideFunction.metricDuration()],
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: "Review backlog (pending items; oldest wait, minutes)",
            left: levels.map(([policyId]) => backlogMetric(METRICS.pendingReviews, policyId)),
            right: levels.map(([policyId]) => backlogMetric(METRICS.oldestPendingReviewMinutes, policyId)),
          }),
        ],
      ],
    });
  }
}
