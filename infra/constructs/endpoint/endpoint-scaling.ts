/**
 * Auto scaling of the real-time endpoint's variant, on the work and once (`ENDPOINT_SCALING` in
 * the topology says why): two target-tracking policies that only add instances, one on
 * SageMaker's `ConcurrentRequestsPerModel` (capped, so one scale-out adds at most
 * `ENDPOINT_SCALING.workStep` of the fleet) and one on the intake's backlog per instance (the
 * capacity follower's metric), and one step policy that removes instances only while those left
 * would stay under the target. Scale-out cooldowns are about an instance's start. Both move the
 * instance count between the minimum and maximum given (`-c initialInstanceCount`,
 * `-c maxInstanceCount`).
 */
import { Duration } from "aws-cdk-lib";
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { Construct } from "constructs";
import { concurrentRequestsTarget } from "../../../shared/domain/capacity-plan.ts";
import measured from "../../../shared/domain/topology/measured-times.json" with { type: "json" };
import { ENDPOINT_SCALING, METRICS, SCALING_MATH } from "../../../shared/domain/topology.ts";

/** Properties of {@link EndpointScaling}. */
export interface EndpointScalingProps {
  readonly endpoint: sagemaker.CfnEndpoint;
  readonly endpointName: string;
  readonly variantName: string;
  /** Fewest instances (at least 1). */
  readonly minCapacity: number;
  /** Most instances (at least the minimum). */
  readonly maxCapacity: number;
  /** Target concurrent requests per instance. @default concurrentRequestsTarget of the measured fresh item time */
  readonly concurrentRequestsTarget?: number;
  /** Seconds one instance takes per item. @default the measured fresh item time */
  readonly secondsPerItem?: number;
}

const minute = Duration.minutes(1);

/** The scalable target (the construct's default child, so its logical id is the construct's) and its policies. */
export class EndpointScaling extends Construct {
  public readonly target: appscaling.ScalableTarget;
  /** The target-tracking value of concurrent requests per instance. */
  public readonly concurrentRequestsTarget: number;
  /** The target-tracking value of intake items per instance. */
  public readonly backlogTarget: number;

  constructor(scope: Construct, id: string, props: EndpointScalingProps) {
    super(scope, id);
    if (!Number.isInteger(props.minCapacity) || props.minCapacity < 1)
      throw new Error(
        `the minimum instance count must be an integer of at least 1, got ${props.minCapacity}`,
      );
    if (!Number.isInteger(props.maxCapacity) || props.maxCapacity < props.minCapacity)
      throw new Error(
        `the maximum instance count must be an integer of at least the minimum (${props.minCapacity}), got ${props.maxCapacity}`,
      );
    this.target = new appscaling.ScalableTarget(this, "Default", {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${props.endpointName}/variant/${props.variantName}`,
      scalableDimension: "sagemaker:variant:DesiredInstanceCount",
      minCapacity: props.minCapacity,
      maxCapacity: props.maxCapacity,
    });
    this.target.node.addDependency(props.endpoint);
    this.concurrentRequestsTarget =
      props.concurrentRequestsTarget ?? concurrentRequestsTarget(measured.secondsPerItem.fresh);
    const secondsPerItem = props.secondsPerItem ?? measured.secondsPerItem.fresh;
    this.backlogTarget = Math.max(1, Math.floor(ENDPOINT_SCALING.backlogSeconds / secondsPerItem));
    this.scaleOutOnWork(props);
    this.scaleOutOnBacklog();
    this.scaleInWhileUnderTarget(props);
  }

  /** SageMaker's concurrent requests per instance, one minute at a time. */
  private work(props: EndpointScalingProps): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: "AWS/SageMaker",
      metricName: "ConcurrentRequestsPerModel",
      dimensionsMap: { EndpointName: props.endpointName, VariantName: props.variantName },
      statistic: "Average",
      period: minute,
    });
  }

  /**
   * Target tracking on the capped work metric, scale-out only. CDK's target tracking takes no
   * metric math, so the policy is written at the CloudFormation level.
   */
  private scaleOutOnWork(props: EndpointScalingProps): void {
    const cap = Math.round(this.concurrentRequestsTarget * ENDPOINT_SCALING.workStep * 100) / 100;
    const work = this.work(props);
    new appscaling.CfnScalingPolicy(this, "Work", {
      policyName: `${props.endpointName}-work`.slice(0, 256),
      policyType: "TargetTrackingScaling",
      scalingTargetId: this.target.scalableTargetId,
      targetTrackingScalingPolicyConfiguration: {
        targetValue: this.concurrentRequestsTarget,
        disableScaleIn: true,
        scaleOutCooldown: ENDPOINT_SCALING.scaleOutCooldownSeconds,
        scaleInCooldown: ENDPOINT_SCALING.scaleInCooldownSeconds,
        customizedMetricSpecification: {
          metrics: [
            {
              id: "work",
              metricStat: {
                metric: {
                  namespace: work.namespace,
                  metricName: work.metricName,
                  dimensions: Object.entries(work.dimensions ?? {}).map(([name, value]) => ({
                    name,
                    value: String(value),
                  })),
                },
                stat: "Average",
              },
              returnData: false,
            },
            {
              id: "capped",
              expression: SCALING_MATH.cappedWork(cap),
              label: "concurrent requests per instance (capped)",
              returnData: true,
            },
          ],
        },
      },
    });
  }

  /** Target tracking on the intake's backlog per instance, scale-out only: bursts. */
  private scaleOutOnBacklog(): void {
    this.target.scaleToTrackMetric("Backlog", {
      targetValue: this.backlogTarget,
      customMetric: new cloudwatch.Metric({
        namespace: METRICS.namespace,
        metricName: METRICS.follower.backlogPerInstance,
        dimensionsMap: { service: METRICS.service.capacityFollower },
        statistic: "Average",
        period: minute,
      }),
      disableScaleIn: true,
      scaleOutCooldown: Duration.seconds(ENDPOINT_SCALING.scaleOutCooldownSeconds),
    });
  }

  /**
   * Removes instances while the work metric with one instance fewer stays at or below
   * `scaleInShareOfTarget` of the target for `scaleInMinutes`: one instance when that is all the
   * margin allows, a quarter, a half or three quarters of the fleet when the metric is that far
   * under (the work left per instance then stays under the threshold). An alarm on metric math
   * may invoke a step policy; a composite alarm may not.
   */
  private scaleInWhileUnderTarget(props: EndpointScalingProps): void {
    const threshold =
      Math.round(this.concurrentRequestsTarget * ENDPOINT_SCALING.scaleInShareOfTarget * 1000) / 1000;
    const withOneFewer = new cloudwatch.MathExpression({
      expression: SCALING_MATH.workWithOneFewer,
      usingMetrics: {
        work: this.work(props),
        instances: new cloudwatch.Metric({
          namespace: METRICS.namespace,
          metricName: METRICS.follower.instancesInService,
          dimensionsMap: { service: METRICS.service.capacityFollower },
          statistic: "Maximum",
          period: minute,
        }),
      },
      label: "concurrent requests per instance with one fewer",
      period: minute,
    });
    const at = (share: number) => Math.round(threshold * share * 1000) / 1000;
    this.target.scaleOnMetric("ScaleIn", {
      metric: withOneFewer,
      adjustmentType: appscaling.AdjustmentType.PERCENT_CHANGE_IN_CAPACITY,
      minAdjustmentMagnitude: 1,
      scalingSteps: [
        { upper: at(0.25), change: -75 },
        { lower: at(0.25), upper: at(0.5), change: -50 },
        { lower: at(0.5), upper: at(0.75), change: -25 },
        // One instance: a percentage under one rounds away from zero.
        { lower: at(0.75), upper: threshold, change: -1 },
      ],
      evaluationPeriods: ENDPOINT_SCALING.scaleInMinutes,
      datapointsToAlarm: ENDPOINT_SCALING.scaleInMinutes,
      cooldown: Duration.seconds(ENDPOINT_SCALING.scaleInCooldownSeconds),
      metricAggregationType: appscaling.MetricAggregationType.MAXIMUM,
    });
  }
}
