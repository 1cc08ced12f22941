/**
 * Auto scaling of the async endpoint's variant, on the work SageMaker holds for it rather than on
 * calls: from zero instances, when nothing is queued, to the maximum given (`-c asyncMaxInstanceCount`).
 *
 * - Target tracking on `ApproximateBacklogSizePerInstance` (objects queued or running, per
 *   instance; a customized metric on the endpoint's name, as SageMaker's guide sets it up) keeps
 *   `backlogPerInstanceTarget` objects per instance, and scales in to zero once the backlog is gone.
 * - A step policy on an alarm on `HasBacklogWithoutCapacity` (1 while requests wait and no
 *   instance runs) adds one instance from zero: without it, scaling up from zero waits until the
 *   backlog passes the tracking target, and a small batch would wait for ever.
 */
import { Duration } from "aws-cdk-lib";
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { Construct } from "constructs";
import { ASYNC_LANE } from "../../../shared/domain/topology.ts";

/** Properties of {@link AsyncEndpointScaling}. */
export interface AsyncEndpointScalingProps {
  readonly endpoint: sagemaker.CfnEndpoint;
  readonly endpointName: string;
  readonly variantName: string;
  /** Most instances (at least 1). */
  readonly maxCapacity: number;
}

/** One of the endpoint's own async metrics (`AWS/SageMaker`, by endpoint name). */
export function asyncEndpointMetric(
  endpointName: string,
  metricName:
    | "ApproximateBacklogSizePerInstance"
    | "HasBacklogWithoutCapacity"
    | "ApproximateAgeOfOldestRequest",
  statistic: "Average" | "Maximum",
  period: Duration = Duration.minutes(1),
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: "AWS/SageMaker",
    metricName,
    dimensionsMap: { EndpointName: endpointName },
    statistic,
    period,
  });
}

/** The scalable target (the construct's default child) and its two policies. */
export class AsyncEndpointScaling extends Construct {
  public readonly target: appscaling.ScalableTarget;

  constructor(scope: Construct, id: string, props: AsyncEndpointScalingProps) {
    super(scope, id);
    if (!Number.isInteger(props.maxCapacity) || props.maxCapacity < 1)
      throw new Error(
        `the async endpoint's maximum instance count must be an integer of at least 1, got ${props.maxCapacity}`,
      );
    this.target = new appscaling.ScalableTarget(this, "Default", {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${props.endpointName}/variant/${props.variantName}`,
      scalableDimension: "sagemaker:variant:DesiredInstanceCount",
      minCapacity: 0,
      maxCapacity: props.maxCapacity,
    });
    this.target.node.addDependency(props.endpoint);
    this.target.scaleToTrackMetric("Backlog", {
      targetValue: ASYNC_LANE.backlogPerInstanceTarget,
      customMetric: asyncEndpointMetric(props.endpointName, "ApproximateBacklogSizePerInstance", "Average"),
      scaleOutCooldown: Duration.seconds(ASYNC_LANE.scaleOutCooldownSeconds),
      scaleInCooldown: Duration.seconds(ASYNC_LANE.scaleInCooldownSeconds),
    });
    const wake = ASYNC_LANE.wakeUp;
    this.target.scaleOnMetric("WakeUp", {
      metric: asyncEndpointMetric(
        props.endpointName,
        "HasBacklogWithoutCapacity",
        "Average",
        Duration.seconds(wake.periodSeconds),
      ),
      // At 1 (requests wait, no instance runs) add one; below it do nothing (target tracking scales in).
      scalingSteps: [
        { upper: 1, change: 0 },
        { lower: 1, change: 1 },
      ],
      adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      metricAggregationType: appscaling.MetricAggregationType.AVERAGE,
      cooldown: Duration.seconds(wake.cooldownSeconds),
      evaluationPeriods: wake.evaluationPeriods,
      datapointsToAlarm: wake.evaluationPeriods,
    });
  }
}
