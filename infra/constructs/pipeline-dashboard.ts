/**
 * The pipeline's dashboard: queues, routing, the endpoint, the decide function and the review
 * backlog per policy.
 */
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import { Construct } from "constructs";
import { METRICS } from "../../shared/domain/topology.ts";
import type { DecisionPipeline } from "./decision-pipeline.ts";
import {
  backlogMetric,
  type EndpointVariant,
  endpointMetric,
  escalationRate,
  pipelineMetric,
} from "./pipeline-metrics.ts";

/** Properties of {@link PipelineDashboard}. */
export interface PipelineDashboardProps {
  readonly pipeline: DecisionPipeline;
  /** The endpoint and its variant. */
  readonly endpoint: EndpointVariant;
  /** Policies whose review backlog is shown. */
  readonly policyIds: readonly string[];
}

/** The dashboard (the construct's default child, so its logical id is the construct's). */
export class PipelineDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: PipelineDashboardProps) {
    super(scope, id);
    const { queues, functions } = props.pipeline;
    const endpoint = (metricName: string, statistic: string) =>
      endpointMetric(props.endpoint, metricName, statistic);
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
            right: [queues.intake.metricApproximateAgeOfOldestMessage()],
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
        [
          new cloudwatch.GraphWidget({
            title: "Endpoint",
            left: [endpoint("Invocations", "Sum"), endpoint("Invocation5XXErrors", "Sum")],
            right: [endpoint("ModelLatency", "p50"), endpoint("ModelLatency", "p90")],
          }),
          new cloudwatch.GraphWidget({
            title: "Decide function",
            left: [functions.decide.metricInvocations(), functions.decide.metricErrors()],
            right: [functions.decide.metricDuration()],
          }),
        ],
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
}
