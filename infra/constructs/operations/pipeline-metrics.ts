/**
 * The metrics the alarms and the dashboard read: the endpoint's (SageMaker publishes them per
 * endpoint and variant), the decide function's routing counts, endpoint failures and oldest
 * items, and the review backlog's, in the namespace and dimensions the functions emit them under
 * (`METRICS` in the topology).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { type Lane, METRICS } from "../../../shared/domain/topology.ts";

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

/** A count the decide function emits, summed over `period` (fifteen minutes unless given). */
export function pipelineMetric(
  metricName: string,
  period: Duration = Duration.minutes(15),
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS.namespace,
    metricName,
    dimensionsMap: { service: METRICS.service.decide },
    statistic: "Sum",
    period,
  });
}

/**
 * The age of the oldest item a lane's queue holds: the larger, each period, of SQS's
 * ApproximateAgeOfOldestMessage and the oldest age the decide function received (its maximum per
 * period). SQS leaves a message out of its figure once it has been received three times or more,
 * and an item the overload backoff keeps returning is exactly that, so in a long overload the
 * queue's figure alone reads low when it matters. The function's figure is filled with 0 where it
 * has no data point: a period without an invocation on the lane received no item, so there is no
 * age to add to what SQS reports (0 never raises the maximum, and never breaches).
 */
export function oldestItemAge(queue: sqs.IQueue, lane: Lane, period: Duration): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: "MAX([queued, FILL(received, 0)])",
    usingMetrics: {
      queued: queue.metricApproximateAgeOfOldestMessage({ period, statistic: "Maximum" }),
      received: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName: METRICS.oldestItemAgeSeconds,
        dimensionsMap: { service: METRICS.service.decide, [METRICS.laneDimension]: METRICS.lanes[lane] },
        statistic: "Maximum",
        period,
      }),
    },
    label: `oldest ${lane} item age (s)`,
    period,
  });
}

/**
 * `FILL(id, 0)`: a count that has no datapoint where nothing happened (the functions' EMF counts,
 * DynamoDB's throttles) read as 0. Metric math leaves a result empty at a timestamp where any
 * series it combines has none, and an alarm reads empty as missing data.
 */
export const zeroFilled = (id: string) => `FILL(${id}, 0)`;

/**
 * The sum of sparse counts, each zero-filled: a period with throttled writes only is still
 * a sum (the bare `reads + writes` would be empty there, and the alarm would stay OK).
 */
export function sparseSum(
  usingMetrics: Record<string, cloudwatch.IMetric>,
  options: { label: string; period: Duration },
): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: Object.keys(usingMetrics).map(zeroFilled).join(" + "),
    usingMetrics,
    ...options,
  });
}

/**
 * Events the targets refused because they do not match the decision record they name (the
 * auto-action's and the review intake's `event_mismatch`), summed over five minutes, zero-filled.
 */
export function eventMismatches(): cloudwatch.MathExpression {
  const period = Duration.minutes(5);
  const refused = (service: string) =>
    new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName: METRICS.eventMismatch,
      dimensionsMap: { service },
      statistic: "Sum",
      period,
    });
  return sparseSum(
    { auto: refused(METRICS.service.autoAction), review: refused(METRICS.service.reviewIntake) },
    { label: "events refused: not their record's", period },
  );
}

/**
 * The share of decisions routed to people, over fifteen minutes (0 when there were none). Both
 * counts are zero-filled: when every item escalates, `routed_auto` has no datapoint, and the
 * bare ratio would be empty exactly when it should be 1.
 */
export function escalationRate(): cloudwatch.MathExpression {
  const [auto, human] = [zeroFilled("auto"), zeroFilled("human")];
  return new cloudwatch.MathExpression({
    expression: `IF((${auto} + ${human}) > 0, ${human} / (${auto} + ${human}), 0)`,
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
