/**
 * The pipeline's dashboard: queues, routing, the endpoint, the decide function and the review
 * backlog per policy.
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import { Construct } from "constructs";
import { METRICS } from "../../../shared/domain/topology.ts";
import type { DecisionPipeline } from "../decision-pipeline.ts";
import {
  backlogMetric,
  type EndpointVariant,
  endpointMetric,
  escalationRate,
  oldestItemAge,
  pipelineMetric,
} from "./pipeline-metrics.ts";

/** Properties of {@link PipelineDashboard}. */
export interface PipelineDashboardProps {
  readonly pipeline: DecisionPipeline;
  /** The endpoint and its variant; none when the live lane runs on the async endpoint. */
  readonly endpoint?: EndpointVariant;
  /** Policies whose review backlog is shown. */
  readonly policyIds: readonly string[];
}

/** The dashboard (the construct's default child, so its logical id is the construct's). */
export class PipelineDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: PipelineDashboardProps) {
    super(scope, id);
    const { queues } = props.pipeline;
    this.dashboard = new cloudwatch.Dashboard(this, "Default", {
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: "Queues",
            left: [
              queues.intake.metricApproximateNumberOfMessagesVisible(),
              queues.deadLetters.metricApproximateNumberOfMessagesVisible(),
              queues.review.metricApproximateNumberOfMessagesVisible(),
              queues.autoAction.metricApproximateNumberOfMessagesVisible(),
            ],
            // What the alarm and the step policy read, beside SQS's figure that leaves out items
            // received three times or more.
            right: [
              oldestItemAge(queues.intake, "intake", Duration.minutes(5)),
              queues.intake.metricApproximateAgeOfOldestMessage(),
            ],
          }),
          new cloudwatch.GraphWidget({
            title: "Routing",
            left: [
              pipelineMetric("routed_auto"),
              pipelineMetric("routed_human"),
              pipelineMetric("items_rejected"),
            ],
            right: [escalationRate()],
          }),
        ],
        ...this.endpointWidgets(props),
        [
          new cloudwatch.GraphWidget({
            title: "Review backlog (pending items; oldest wait, minutes)",
            left: props.policyIds.map((policyId) => backlogMetric(METRICS.pendingReviews, policyId)),
            right: props.policyIds.map((policyId) =>
              backlogMetric(METRICS.oldestPendingReviewMinutes, policyId),
            ),
          }),
        ],
      ],
    });
  }

  /** The endpoint's and the decide function's row: none without them (the async lane's own metrics are its alarms'). */
  private endpointWidgets(props: PipelineDashboardProps): cloudwatch.IWidget[][] {
    const { decide } = props.pipeline.functions;
    const variant = props.endpoint;
    if (!variant || !decide) return [];
    const endpoint = (metricName: string, statistic: string) =>
      endpointMetric(variant, metricName, statistic);
    return [
      [
        new cloudwatch.GraphWidget({
          title: "Endpoint",
          // Invocation5XXErrors includes the busy 503s; endpoint_failures (the alarm's) does not.
          left: [
            endpoint("Invocations", "Sum"),
            endpoint("Invocation5XXErrors", "Sum"),
            pipelineMetric(METRICS.endpointFailures, Duration.minutes(5)),
          ],
          right: [endpoint("ModelLatency", "p50"), endpoint("ModelLatency", "p90")],
        }),
        new cloudwatch.GraphWidget({
          title: "Decide function",
          left: [decide.metricInvocations(), decide.metricErrors()],
          right: [decide.metricDuration()],
        }),
      ],
    ];
  }
}
