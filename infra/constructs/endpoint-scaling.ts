/**
 * Auto scaling of the real-time endpoint's variant: its instance count between a minimum and a
 * maximum, on target tracking.
 */
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import type * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { Construct } from "constructs";

/** Properties of {@link EndpointScaling}. */
export interface EndpointScalingProps {
  readonly endpoint: sagemaker.CfnEndpoint;
  readonly variantName: string;
  readonly minCapacity: number;
  readonly maxCapacity: number;
  /** Target invocations per instance per minute for scaling. @default 30 */
  readonly invocationsPerInstanceTarget?: number;
}

/** The scalable target (the construct's default child, so its logical id is the construct's) and its policies. */
export class EndpointScaling extends Construct {
  public readonly target: appscaling.ScalableTarget;

  constructor(scope: Construct, id: string, props: EndpointScalingProps) {
    super(scope, id);
    this.target = new appscaling.ScalableTarget(this, "Default", {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${props.endpoint.attrEndpointName}/variant/${props.variantName}`,
      scalableDimension: "sagemaker:variant:DesiredInstanceCount",
      minCapacity: props.minCapacity,
      maxCapacity: props.maxCapacity,
    });
    this.target.node.addDependency(props.endpoint);
    this.target.scaleToTrackMetric("InvocationsPerInstance", {
      targetValue: props.invocationsPerInstanceTarget ?? 30,
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
    });
  }
}
