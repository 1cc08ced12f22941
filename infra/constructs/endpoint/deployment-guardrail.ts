/**
 * The alarms a blue/green deployment of the real-time endpoint rolls back on. Two read what the
 * new fleet itself shows: SageMaker publishes its metrics with the new endpoint configuration's
 * name (`EndpointConfigName`) once it takes traffic, so they see the new fleet apart from the old:
 * a fleet that refuses nearly every call (503 to everything), and one slower than the variant as
 * a whole (old and new together). The third judges the endpoint prober's calls alone
 * (`endpoint-prober.ts`, issue 42): while the new fleet bakes (the capacity follower's flag), a
 * prober that heard no reply, or did not run, for `silentMinutes` rolls it back, so a fleet nobody
 * tried cannot pass, and the gaps of light upstream traffic (a healthy fleet rolled back in two
 * runs of three at 1 call a minute when this alarm read the fleet's own calls) cannot fail one. A
 * fleet that never passes /ping is SageMaker's own to roll back (the startup health check).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type { Construct } from "constructs";
import { ENDPOINT_PROBER } from "../../../shared/domain/topology/prober.ts";
import { ENDPOINT_DEPLOYMENT, GUARDRAIL_MATH, METRICS } from "../../../shared/domain/topology.ts";
import { type EndpointVariant, endpointMetric } from "../operations/pipeline-metrics.ts";

/** The new fleet's rollback alarms. */
export interface GuardrailAlarms {
  /** Nearly every call refused (5xx) for three minutes. */
  readonly refusing: cloudwatch.Alarm;
  /** Model latency well above the variant's as a whole, over two five-minute periods. */
  readonly slower: cloudwatch.Alarm;
  /** Baking, and no reply to the endpoint prober's calls for `silentMinutes`. */
  readonly silent: cloudwatch.Alarm;
}

const minute = Duration.minutes(1);

/** Each alarm's period and periods: refusals minute by minute, latency over five minutes. */
const WINDOWS = {
  refusing: { period: minute, periods: 3 },
  slower: { period: Duration.minutes(5), periods: 2 },
  silent: { period: minute, periods: ENDPOINT_DEPLOYMENT.silentMinutes },
} as const;

/** Each guardrail alarm's evaluation window in seconds (periods × period). */
export function guardrailWindows(): number[] {
  return Object.values(WINDOWS).map((w) => w.period.toSeconds() * w.periods);
}

/** The rollback alarms of `endpoint`'s fleet with configuration `configName` (the new one at each deploy). */
export function guardrailAlarms(
  scope: Construct,
  endpoint: EndpointVariant,
  configName: string,
): GuardrailAlarms {
  const fleet = (metricName: string, statistic: string, period: Duration) =>
    endpointMetric(endpoint, metricName, statistic, { period }).with({
      dimensionsMap: {
        EndpointName: endpoint.endpointName,
        VariantName: endpoint.variantName,
        EndpointConfigName: configName,
      },
    });
  const custom = (service: string, metricName: string, statistic: string) =>
    new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName,
      dimensionsMap: { service },
      statistic,
      period: minute,
    });
  const calls = fleet("Invocations", "Sum", minute);
  const refused = fleet("Invocation5XXErrors", "Sum", minute);
  const alarm = (id: string, props: Omit<cloudwatch.AlarmProps, "comparisonOperator">) =>
    new cloudwatch.Alarm(scope, id, {
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...props,
    });
  const d = ENDPOINT_DEPLOYMENT;
  return {
    refusing: alarm("NewFleetRefusing", {
      metric: new cloudwatch.MathExpression({
        expression: GUARDRAIL_MATH.refusedShare,
        usingMetrics: { calls, refused },
        label: "share of the fleet's calls refused (5xx)",
        period: WINDOWS.refusing.period,
      }),
      threshold: d.refusedShare,
      evaluationPeriods: WINDOWS.refusing.periods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The endpoint's fleet refuses (5xx) ${d.refusedShare * 100}% or more of its calls: broken or never ready (a deployment rolls back on it)`,
    }),
    slower: alarm("NewFleetSlower", {
      metric: new cloudwatch.MathExpression({
        expression: GUARDRAIL_MATH.slowerThanVariant,
        usingMetrics: {
          green: fleet("ModelLatency", "Average", WINDOWS.slower.period),
          variant: endpointMetric(endpoint, "ModelLatency", "Average", { period: WINDOWS.slower.period }),
        },
        label: "the fleet's model latency ÷ the variant's",
        period: WINDOWS.slower.period,
      }),
      threshold: d.slowerThanVariant,
      evaluationPeriods: WINDOWS.slower.periods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `A new fleet answers ${d.slowerThanVariant} times slower than the variant as a whole (a deployment's canary rolls back on it)`,
    }),
    silent: alarm("NewFleetSilent", {
      metric: new cloudwatch.MathExpression({
        expression: ENDPOINT_PROBER.silentWhileBaking,
        usingMetrics: {
          baking: custom(METRICS.service.capacityFollower, METRICS.follower.deploymentBaking, "Maximum"),
          replies: custom(ENDPOINT_PROBER.service, ENDPOINT_PROBER.metrics.replies, "Sum"),
        },
        label: "baking with no reply to the prober",
        period: WINDOWS.silent.period,
      }),
      threshold: 1,
      evaluationPeriods: WINDOWS.silent.periods,
      // Missing data is breaching inside the expression (FILL), only while the follower says it bakes.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `While a deployment's new fleet baked, the endpoint prober heard no reply for ${d.silentMinutes} minutes (or did not run): nobody could try the fleet, so it rolls back`,
    }),
  };
}
