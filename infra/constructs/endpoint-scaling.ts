/**
 * Auto scaling of the real-time endpoint's variant, on the work it is given rather than on calls
 * counted: target tracking on SageMaker's high-resolution `ConcurrentRequestsPerModel` (10 s data;
 * queued requests count), with its target derived from the topology and the measured time per
 * item (`concurrentRequestsTarget`); scale-out after 60 s, scale-in after 300 s. A step policy on
 * the age of the intake's oldest item (`oldestItemAge`: SQS's figure or the decide function's,
 * the larger) adds instances when items wait although the requests per instance look normal (the
 * event source's concurrency caps what reaches the endpoint). Both only
 * move the instance count between the minimum and maximum given (`-c initialInstanceCount`,
 * `-c maxInstanceCount`).
 */
import { Duration } from "aws-cdk-lib";
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import type * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { concurrentRequestsTarget } from "../../shared/domain/capacity-plan.ts";
import measured from "../../shared/domain/topology/measured-times.json" with { type: "json" };
import { ENDPOINT_SCALING } from "../../shared/domain/topology.ts";
import { oldestItemAge } from "./pipeline-metrics.ts";

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
}

/** The scalable target (the construct's default child, so its logical id is the construct's) and its policies. */
export class EndpointScaling extends Construct {
  public readonly target: appscaling.ScalableTarget;
  /** The target-tracking value of concurrent requests per instance. */
  public readonly concurrentRequestsTarget: number;

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
    this.target.scaleToTrackMetric("ConcurrentRequests", {
      targetValue: this.concurrentRequestsTarget,
      predefinedMetric:
        appscaling.PredefinedMetric.SAGEMAKER_VARIANT_CONCURRENT_REQUESTS_PER_MODEL_HIGH_RESOLUTION,
      scaleOutCooldown: Duration.seconds(ENDPOINT_SCALING.scaleOutCooldownSeconds),
      scaleInCooldown: Duration.seconds(ENDPOINT_SCALING.scaleInCooldownSeconds),
    });
  }

  /**
   * Adds instances when the oldest item of the intake `queue` has waited past the steps' ages (one,
   * then two at a time); never removes any (target tracking scales in). The age is a metric math
   * expression (`oldestItemAge`): Application Auto Scaling leaves a step policy's alarm to its
   * owner, and a metric alarm on an expression may invoke it like any other (composite alarms may
   * not); the aggregation type is given, as CDK cannot read a statistic off an expression.
   */
  scaleOnBacklog(queue: sqs.IQueue): void {
    const steps = ENDPOINT_SCALING.backlogStepSeconds;
    this.target.scaleOnMetric("Backlog", {
      metric: oldestItemAge(queue, "intake", Duration.seconds(ENDPOINT_SCALING.backlogPeriodSeconds)),
      scalingSteps: [
        { upper: steps.addOne, change: 0 },
        { lower: steps.addOne, change: 1 },
        { lower: steps.addTwo, change: 2 },
      ],
      adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      metricAggregationType: appscaling.MetricAggregationType.MAXIMUM,
      cooldown: Duration.seconds(ENDPOINT_SCALING.scaleOutCooldownSeconds),
      evaluationPeriods: ENDPOINT_SCALING.backlogLookbackPeriods,
      datapointsToAlarm: 1,
    });
  }
}
