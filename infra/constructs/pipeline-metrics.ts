/**
 * The metrics the alarms and the dashboard read: the endpoint's (SageMaker publishes them per
 * endpoint and variant), the decide function's routing counts and the review backlog's, in the
 * namespace and dimensions the functions emit them under (`METRICS` in the topology).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import { METRICS } from "../../shared/domain/topology.ts";

/** The endpoint's variant, as its metrics are dimensioned. */
export interface EndpointVariant {
  readonly endpointName: string;
  readonly variantName: string;
}

/**
 * A metric of the endpoint's variant: an invocation metric (`AWS/SageMaker`) unless `namespace`
 * names the instances' (`/aws/sagemaker/Endpoints`: CPU, memory).
 */
export function endpointMetric(
  endpoint: EndpointVariant,
  metricName: string,
  statistic: string,
  options: { namespace?: string; period?: Duration } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: options.namespace ?? "AWS/SageMaker",
    metricName,
    dimensionsMap: { EndpointName: endpoint.endpointName, VariantName: endpoint.variantName },
    statistic,
    period: options.period ?? Duration.minutes(5),
  });
}

/** A count the decide function emits, summed over fifteen minutes. */
export function pipelineMetric(metricName: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { service: METRICS.service.decide },
    statistic: "Sum",
    period: Duration.minutes(15),
  });
}

/** The share of decisions routed to people, over fifteen minutes (0 when there were none). */
export function escalationRate(): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: "IF((auto + human) > 0, human / (auto + human), 0)",
    usingMetrics: { auto: pipelineMetric("routed_auto"), human: pipelineMetric("routed_human") },
    label: "escalation rate",
    period: Duration.minutes(15),
  });
}

/** One policy's review backlog figure (pending items or the oldest wait), its maximum over five minutes. */
export function backlogMetric(metricName: string, policyId: string): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { service: METRICS.service.reviewBacklog, [METRICS.policyDimension]: policyId },
    statistic: "Maximum",
    period: Duration.minutes(5),
  });
}
