/**
 * The decision endpoint on SageMaker: model, endpoint configuration and endpoint, the container
 * from `endpoint/Dockerfile` (or an image URI), the GGUF model from S3. Two modes: real-time
 * (instances, auto scaling on invocations per instance; the default) and serverless (pay per
 * use, scale to zero; CPU only, 1 to 6 GB of memory, 4 MB payloads, cold starts; no network
 * isolation or storage key, which Serverless Inference does not support).
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
import { endpointAdmission } from "../../shared/domain/topology.ts";

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

/** Serverless Inference's documented limits. */
export const SERVERLESS_LIMITS = {
  memoryMiB: [1024, 2048, 3072, 4096, 5120, 6144],
  maxConcurrency: 200,
  payloadBytes: 4 * 1024 * 1024,
  invocationSeconds: 60,
  pingSeconds: 180,
} as const;

/** Serverless settings: memory (which also sets the vCPUs SageMaker gives) and concurrency. */
export interface ServerlessSettings {
  /** 1024 to 6144 in steps of 1024. @default 4096 */
  readonly memoryMiB?: number;
  /** Concurrent invocations, 1 to 200. @default 5 */
  readonly maxConcurrency?: number;
  /** Instances kept warm (billed while provisioned), at most maxConcurrency. @default none */
  readonly provisionedConcurrency?: number;
}

/** Checks serverless settings against the documented limits; throws naming the value at fault. */
export function checkServerlessSettings(
  settings: ServerlessSettings,
  instanceType?: string,
): Required<Omit<ServerlessSettings, "provisionedConcurrency">> &
  Pick<ServerlessSettings, "provisionedConcurrency"> {
  const memoryMiB = settings.memoryMiB ?? 4096;
  const maxConcurrency = settings.maxConcurrency ?? 5;
  if (!(SERVERLESS_LIMITS.memoryMiB as readonly number[]).includes(memoryMiB))
    throw new Error(
      `serverlessMemoryMiB must be one of ${SERVERLESS_LIMITS.memoryMiB.join(", ")}, got ${memoryMiB}`,
    );
  if (
    !Number.isInteger(maxConcurrency) ||
    maxConcurrency < 1 ||
    maxConcurrency > SERVERLESS_LIMITS.maxConcurrency
  )
    throw new Error(`serverlessMaxConcurrency must be an integer from 1 to 200, got ${maxConcurrency}`);
  const provisioned = settings.provisionedConcurrency;
  if (
    provisioned !== undefined &&
    (!Number.isInteger(provisioned) || provisioned < 1 || provisioned > maxConcurrency)
  )
    throw new Error(
      `serverlessProvisionedConcurrency must be an integer from 1 to ${maxConcurrency}, got ${provisioned}`,
    );
  if (instanceType && isGpuInstance(instanceType))
    throw new Error(
      `serverless endpoints run on CPU only: drop instanceType ${instanceType} or use endpointMode=realtime`,
    );
  return {
    memoryMiB,
    maxConcurrency,
    ...(provisioned !== undefined ? { provisionedConcurrency: provisioned } : {}),
  };
}

/** Properties of {@link DecisionEndpoint}. */
export interface DecisionEndpointProps {
  /** Real-time instances (the default) or Serverless Inference. @default "realtime" */
  readonly mode?: "realtime" | "serverless";
  /** Serverless settings (mode "serverless" only). */
  readonly serverless?: ServerlessSettings;
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
  /** Concurrent batch-lane invocations of the decide function (they share the admission). @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
}

/** The SageMaker endpoint serving decisions. */
export class DecisionEndpoint extends Construct {
  public readonly endpoint: sagemaker.CfnEndpoint;
  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly instanceType: string;
  public readonly role: iam.Role;
  /** The key of the ML storage volume; undefined on instance types with instance storage and serverless. */
  public readonly storageKey: kms.Key | undefined;
  public readonly mode: "realtime" | "serverless";
  /** Most requests the endpoint runs at once (instances × 1, or the serverless concurrency). */
  public readonly maxConcurrency: number;

  constructor(scope: Construct, id: string, props: DecisionEndpointProps) {
    super(scope, id);
    this.mode = props.mode ?? "realtime";
    const serverless =
      this.mode === "serverless"
        ? checkServerlessSettings(props.serverless ?? {}, props.instanceType)
        : undefined;
    this.instanceType = serverless ? "serverless" : (props.instanceType ?? "ml.c6i.xlarge");
    const gpu = !serverless && isGpuInstance(this.instanceType);
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

    this.maxConcurrency = serverless ? serverless.maxConcurrency : (props.maxInstanceCount ?? 4);
    // The admission queue and deadline fit the decide function's concurrency (the topology).
    const admission = endpointAdmission({
      mode: this.mode,
      minInstances: props.initialInstanceCount ?? 1,
      maxInstances: this.maxConcurrency,
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
    });
    const environment: Record<string, string> = {
      DECIDE_GPU: gpu ? "cuda" : "off",
      DECIDE_QUEUE_SIZE: String(admission.queueSize),
      DECIDE_DEADLINE_MS: String(admission.deadlineMs),
    };
    if (props.threads) environment.DECIDE_THREADS = String(props.threads);
    if (props.contextSize) environment.DECIDE_CONTEXT_SIZE = String(props.contextSize);
    if (serverless) {
      // Serverless answers at most 4 MB; one model copy per instance, so one prefix slot per
      // policy fits in the memory left after the model (the budget scales with the memory size).
      environment.DECIDE_BODY_LIMIT = String(SERVERLESS_LIMITS.payloadBytes);
      environment.DECIDE_PREFIX_CACHE_MB = String(Math.max(64, Math.floor(serverless.memoryMiB / 8)));
    }

    const model = new sagemaker.CfnModel(this, "Model", {
      executionRoleArn: this.role.roleArn,
      // Serverless Inference does not support network isolation (nor a VPC): the container still
      // needs no network, and its role allows only the model archive and the image.
      enableNetworkIsolation: !serverless,
      primaryContainer: { image, modelDataUrl: `s3://${props.modelBucket}/${props.modelKey}`, environment },
    });
    model.node.addDependency(this.role);
    this.storageKey =
      serverless || hasInstanceStorage(this.instanceType)
        ? undefined
        : new kms.Key(this, "StorageKey", {
            enableKeyRotation: true,
            description: "Encrypts the decision endpoint's ML storage volumes",
          });
    const variant: sagemaker.CfnEndpointConfig.ProductionVariantProperty = serverless
      ? {
          variantName: "AllTraffic",
          modelName: model.attrModelName,
          initialVariantWeight: 1,
          serverlessConfig: {
            memorySizeInMb: serverless.memoryMiB,
            maxConcurrency: serverless.maxConcurrency,
            ...(serverless.provisionedConcurrency
              ? { provisionedConcurrency: serverless.provisionedConcurrency }
              : {}),
          },
        }
      : {
          variantName: "AllTraffic",
          modelName: model.attrModelName,
          instanceType: this.instanceType,
          initialInstanceCount: props.initialInstanceCount ?? 1,
          initialVariantWeight: 1,
          containerStartupHealthCheckTimeoutInSeconds: 600,
        };
    const config = new sagemaker.CfnEndpointConfig(this, "Config", {
      ...(this.storageKey ? { kmsKeyId: this.storageKey.keyArn } : {}),
      productionVariants: [variant],
    });
    if (serverless)
      NagSuppressions.addResourceSuppressions(config, [
        {
          id: "AwsSolutions-SM2",
          reason:
            "Serverless Inference takes no KMS key for storage; its ephemeral storage is encrypted by SageMaker",
        },
      ]);
    this.endpoint = new sagemaker.CfnEndpoint(this, "Endpoint", {
      endpointConfigName: config.attrEndpointConfigName,
    });
    this.endpointName = this.endpoint.attrEndpointName;
    // Ref of AWS::SageMaker::Endpoint is its ARN.
    this.endpointArn = this.endpoint.ref;
    if (serverless) {
      NagSuppressions.addResourceSuppressions(model, [
        {
          id: "AwsSolutions-SM1",
          reason:
            "Serverless Inference supports neither a VPC nor network isolation; the container needs no network",
        },
      ]);
      return; // Serverless scales itself: no scaling target.
    }

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
