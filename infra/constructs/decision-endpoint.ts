/**
 * The decision endpoint on SageMaker real-time inference: model, endpoint configuration and
 * endpoint, the container from `endpoint/Dockerfile` (or an image URI), the GGUF model from S3,
 * and auto scaling on invocations per instance.
 *
 * Secure by default: the model runs with network isolation (the container reaches nothing: it
 * needs no network, the model archive is fetched by SageMaker itself), which is stronger than
 * placing it in a VPC; the ML storage volume is encrypted with a customer managed key with
 * rotation (where the instance type has EBS storage; instance-store NVMe volumes are encrypted by
 * the hardware and SageMaker refuses a key for them); and the role may pull from the one image
 * repository in use.
 */
import { fileURLToPath } from "node:url";
import { ArnFormat, Stack } from "aws-cdk-lib";
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import * as ecrAssets from "aws-cdk-lib/aws-ecr-assets";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import * as iam from "aws-cdk-lib/aws-iam";
import * as kms from "aws-cdk-lib/aws-kms";
import * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { ENDPOINT_DEADLINE_MS } from "../topology.ts";

/** Instance families with a GPU, which take the CUDA image. */
const GPU_FAMILIES = /^ml\.(g4dn|g5|g6|g6e|p3|p4d|p5)\./;

/** Instance families with local NVMe instance storage, for which SageMaker refuses a KMS key. */
const INSTANCE_STORAGE_FAMILIES = /^ml\.([a-z]+\d+[a-z]*d[a-z]*|g5|g6|g6e|p5)\./;

/** Whether an instance type's ML storage is an instance-store volume (no KMS key allowed). */
export function hasInstanceStorage(instanceType: string): boolean {
  return INSTANCE_STORAGE_FAMILIES.test(instanceType);
}

/** The ECR repository ARN of an image URI in ECR, or undefined for other registries. */
export function ecrRepositoryArn(imageUri: string): string | undefined {
  const match = /^(\d{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/([^:@]+)/.exec(imageUri);
  if (!match) return undefined;
  const partition = imageUri.includes(".amazonaws.com.cn/") ? "aws-cn" : "aws";
  return `arn:${partition}:ecr:${match[2]}:${match[1]}:repository/${match[3]}`;
}

/** Whether an instance type has a GPU. */
export function isGpuInstance(instanceType: string): boolean {
  return GPU_FAMILIES.test(instanceType);
}

/** Properties of {@link DecisionEndpoint}. */
export interface DecisionEndpointProps {
  /** Bucket of the model archive (a `model.tar.gz` holding one `.gguf` file, unpacked at /opt/ml/model). */
  readonly modelBucket: string;
  /** Key of the model archive in that bucket. */
  readonly modelKey: string;
  /** Instance type. @default "ml.c6i.xlarge" (4 vCPU, 8 GiB: a 0.5B Q8_0 model with room) */
  readonly instanceType?: string;
  /** Instances at start (and the scaling minimum). @default 1 */
  readonly initialInstanceCount?: number;
  /** Scaling maximum. @default 4 */
  readonly maxInstanceCount?: number;
  /** Target invocations per instance per minute for scaling. @default 30 */
  readonly invocationsPerInstanceTarget?: number;
  /** A prebuilt image (e.g. in ECR) instead of building `endpoint/Dockerfile`. @default build from the repository */
  readonly imageUri?: string;
  /** Evaluation threads. @default the instance's vCPUs (the server's own default) */
  readonly threads?: number;
  /** Tokens per prompt. @default 4096 */
  readonly contextSize?: number;
}

/** The SageMaker endpoint serving decisions. */
export class DecisionEndpoint extends Construct {
  public readonly endpoint: sagemaker.CfnEndpoint;
  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly instanceType: string;
  public readonly role: iam.Role;
  /** The key of the ML storage volume; undefined on instance types with instance storage. */
  public readonly storageKey: kms.Key | undefined;

  constructor(scope: Construct, id: string, props: DecisionEndpointProps) {
    super(scope, id);
    this.instanceType = props.instanceType ?? "ml.c6i.xlarge";
    const gpu = isGpuInstance(this.instanceType);
    const asset = props.imageUri
      ? undefined
      : new ecrAssets.DockerImageAsset(this, "Image", {
          directory: fileURLToPath(new URL("../..", import.meta.url)),
          file: gpu ? "endpoint/Dockerfile.gpu" : "endpoint/Dockerfile",
          platform: Platform.LINUX_AMD64,
          exclude: ["node_modules", ".cache", "cdk.out", ".git", "test-output"],
        });
    const image = props.imageUri ?? asset!.imageUri;
    const repositoryArn = asset ? asset.repository.repositoryArn : ecrRepositoryArn(image);

    this.role = new iam.Role(this, "Role", {
      assumedBy: new iam.ServicePrincipal("sagemaker.amazonaws.com"),
      description: "Lets SageMaker pull the decision image and read the model archive",
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:GetObject"],
        resources: [`arn:aws:s3:::${props.modelBucket}/${props.modelKey}`],
      }),
    );
    if (repositoryArn) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
          resources: [repositoryArn],
        }),
      );
      this.role.addToPolicy(
        new iam.PolicyStatement({ actions: ["ecr:GetAuthorizationToken"], resources: ["*"] }),
      );
    }
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
        resources: [
          Stack.of(this).formatArn({
            service: "logs",
            resource: "log-group",
            resourceName: "/aws/sagemaker/*",
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    NagSuppressions.addResourceSuppressions(
      this.role,
      [
        {
          id: "AwsSolutions-IAM5",
          reason:
            "ecr:GetAuthorizationToken has no resource-level permissions; image pulls are limited to the one repository in use and logs to /aws/sagemaker/*",
        },
      ],
      true,
    );

    const environment: Record<string, string> = {
      DECIDE_GPU: gpu ? "cuda" : "off",
      DECIDE_DEADLINE_MS: String(ENDPOINT_DEADLINE_MS),
    };
    if (props.threads) environment.DECIDE_THREADS = String(props.threads);
    if (props.contextSize) environment.DECIDE_CONTEXT_SIZE = String(props.contextSize);

    const model = new sagemaker.CfnModel(this, "Model", {
      executionRoleArn: this.role.roleArn,
      enableNetworkIsolation: true,
      primaryContainer: { image, modelDataUrl: `s3://${props.modelBucket}/${props.modelKey}`, environment },
    });
    model.node.addDependency(this.role);
    this.storageKey = hasInstanceStorage(this.instanceType)
      ? undefined
      : new kms.Key(this, "StorageKey", {
          enableKeyRotation: true,
          description: "Encrypts the decision endpoint's ML storage volumes",
        });
    const config = new sagemaker.CfnEndpointConfig(this, "Config", {
      ...(this.storageKey ? { kmsKeyId: this.storageKey.keyArn } : {}),
      productionVariants: [
        {
          variantName: "AllTraffic",
          modelName: model.attrModelName,
          instanceType: this.instanceType,
          initialInstanceCount: props.initialInstanceCount ?? 1,
          initialVariantWeight: 1,
          containerStartupHealthCheckTimeoutInSeconds: 600,
        },
      ],
    });
    this.endpoint = new sagemaker.CfnEndpoint(this, "Endpoint", {
      endpointConfigName: config.attrEndpointConfigName,
    });
    this.endpointName = this.endpoint.attrEndpointName;
    // Ref of AWS::SageMaker::Endpoint is its ARN.
    this.endpointArn = this.endpoint.ref;

    const target = new appscaling.ScalableTarget(this, "Scaling", {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${this.endpointName}/variant/AllTraffic`,
      scalableDimension: "sagemaker:variant:DesiredInstanceCount",
      minCapacity: props.initialInstanceCount ?? 1,
      maxCapacity: props.maxInstanceCount ?? 4,
    });
    target.node.addDependency(this.endpoint);
    target.scaleToTrackMetric("InvocationsPerInstance", {
      targetValue: props.invocationsPerInstanceTarget ?? 30,
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
    });
  }
}
