/**
 * The decision endpoint as SageMaker Asynchronous Inference: the same image and model archive as
 * the real-time endpoint, an endpoint configuration with `AsyncInferenceConfig` (answers and
 * failures written under `async/output/` of the pipeline bucket, SNS success and error topics
 * encrypted with a customer managed key, one object at a time per instance), and its scaling
 * (`async-scaling.ts`: to zero instances when nothing is queued). Its execution role may read the
 * model archive and pull the image, read the lane's requests (`async/input/*`) and nothing else of
 * the bucket, write its answers (`async/output/*`), and publish to the two topics.
 */
import { RemovalPolicy, Stack } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import * as kms from "aws-cdk-lib/aws-kms";
import type * as s3 from "aws-cdk-lib/aws-s3";
import * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import * as sns from "aws-cdk-lib/aws-sns";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { CONTAINER_ENV } from "../../../shared/domain/container-env.ts";
import { ASYNC_LANE } from "../../../shared/domain/topology.ts";
import { endpointContainer } from "../endpoint/endpoint-container.ts";
import { endpointNameOf, variantNameOf } from "../endpoint/endpoint-names.ts";
import { hasInstanceStorage, isGpuInstance } from "../endpoint/instance-types.ts";
import { servedModelsEnvironment, type TierModel } from "../endpoint/tier-models.ts";
import { AsyncEndpointScaling } from "./async-scaling.ts";

/** Properties of {@link AsyncDecisionEndpoint}. */
export interface AsyncDecisionEndpointProps {
  /** Bucket and key of the model archive (the real-time endpoint's). */
  readonly modelBucket: string;
  readonly modelKey: string;
  /** A cascade's later models in the same archive: served alike, so the first is found among them (`tier-models.ts`). */
  readonly tierModels?: readonly TierModel[];
  /** The pipeline bucket: requests under `async/input/`, answers under `async/output/`. */
  readonly bucket: s3.IBucket;
  /** Instance type: CPU, or GPU (the CUDA image). @default "ml.c6i.xlarge" */
  readonly instanceType?: string;
  /** Scaling maximum. @default ASYNC_LANE.defaultMaxInstances */
  readonly maxInstanceCount?: number;
  /** A prebuilt image instead of building the Dockerfile. */
  readonly imageUri?: string;
}

/** The async endpoint, its topics and its scaling. */
export class AsyncDecisionEndpoint extends Construct {
  public readonly endpoint: sagemaker.CfnEndpoint;
  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly variantName: string;
  public readonly instanceType: string;
  public readonly role: iam.Role;
  /** Where SageMaker announces a finished invocation, and a failed one. */
  public readonly successTopic: sns.Topic;
  public readonly errorTopic: sns.Topic;
  public readonly scaling: AsyncEndpointScaling;
  /** The scaling maximum: the submit step's hold-back divides the request TTL's budget by it. */
  public readonly maxInstanceCount: number;

  constructor(scope: Construct, id: string, props: AsyncDecisionEndpointProps) {
    super(scope, id);
    this.instanceType = props.instanceType ?? "ml.c6i.xlarge";
    const gpu = isGpuInstance(this.instanceType);
    this.variantName = variantNameOf(this.instanceType);
    // Named after the variant, as the real-time endpoint is: a new instance type is a new endpoint.
    const name = endpointNameOf(Stack.of(this).stackName, `async-${this.variantName}`);
    const { image, role, logs } = endpointContainer(this, { ...props, gpu, name });
    this.role = role;
    const topicsKey = new kms.Key(this, "TopicsKey", {
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      description: "Encrypts the async decision endpoint's notification topics",
    });
    this.successTopic = new sns.Topic(this, "SuccessTopic", { masterKey: topicsKey, enforceSSL: true });
    this.errorTopic = new sns.Topic(this, "ErrorTopic", { masterKey: topicsKey, enforceSSL: true });
    this.grantLane(props.bucket, topicsKey);
    const model = new sagemaker.CfnModel(this, "Model", {
      executionRoleArn: this.role.roleArn,
      // The container needs no network: SageMaker itself fetches the archive, the requests and writes the answers.
      enableNetworkIsolation: true,
      primaryContainer: {
        image,
        modelDataUrl: `s3://${props.modelBucket}/${props.modelKey}`,
        environment: {
          [CONTAINER_ENV.DECIDE_GPU]: gpu ? "cuda" : "off",
          ...servedModelsEnvironment(props.tierModels ?? []),
        },
      },
    });
    model.node.addDependency(this.role);
    const config = this.config(props.bucket, model);
    this.endpoint = new sagemaker.CfnEndpoint(this, "Endpoint", {
      endpointConfigName: config.attrEndpointConfigName,
      endpointName: name,
      retainAllVariantProperties: true,
    });
    // Its log group has its retention before SageMaker logs (SageMaker's own never expires).
    if (logs) this.endpoint.node.addDependency(logs);
    this.endpointName = name;
    this.endpointArn = this.endpoint.ref;
    this.maxInstanceCount = props.maxInstanceCount ?? ASYNC_LANE.defaultMaxInstances;
    this.scaling = new AsyncEndpointScaling(this, `Scaling-${this.variantName}`, {
      endpoint: this.endpoint,
      endpointName: this.endpointName,
      variantName: this.variantName,
      maxCapacity: this.maxInstanceCount,
    });
  }

  /** The configuration: one variant, its storage key where it has EBS storage, and the async settings. */
  private config(bucket: s3.IBucket, model: sagemaker.CfnModel): sagemaker.CfnEndpointConfig {
    const storageKey = hasInstanceStorage(this.instanceType)
      ? undefined
      : new kms.Key(this, "StorageKey", {
          enableKeyRotation: true,
          description: "Encrypts the async decision endpoint's ML storage volumes",
          removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
        });
    const prefixes = ASYNC_LANE.prefixes;
    return new sagemaker.CfnEndpointConfig(this, "Config", {
      ...(storageKey ? { kmsKeyId: storageKey.keyArn } : {}),
      productionVariants: [
        {
          variantName: this.variantName,
          modelName: model.attrModelName,
          instanceType: this.instanceType,
          // SageMaker creates a variant with at least one instance; scaling takes it to zero once idle.
          initialInstanceCount: 1,
          initialVariantWeight: 1,
        },
      ],
      asyncInferenceConfig: {
        outputConfig: {
          s3OutputPath: `s3://${bucket.bucketName}/${prefixes.results}`,
          s3FailurePath: `s3://${bucket.bucketName}/${prefixes.failures}`,
          notificationConfig: {
            successTopic: this.successTopic.topicArn,
            errorTopic: this.errorTopic.topicArn,
          },
        },
        // One object at a time per instance: its model evaluates one request at a time, and the
        // objects waiting in SageMaker's queue are the backlog scaling reads.
        clientConfig: { maxConcurrentInvocationsPerInstance: ASYNC_LANE.concurrentInvocationsPerInstance },
      },
    });
  }

  /** The role reads the requests only, writes the answers only, and publishes to its topics. */
  private grantLane(bucket: s3.IBucket, topicsKey: kms.Key): void {
    const prefixes = ASYNC_LANE.prefixes;
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:GetObject"],
        resources: [bucket.arnForObjects(`${prefixes.input}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["s3:PutObject", "s3:AbortMultipartUpload"],
        resources: [bucket.arnForObjects(`${prefixes.output}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["sns:Publish"],
        resources: [this.successTopic.topicArn, this.errorTopic.topicArn],
      }),
    );
    // Publishing to a topic encrypted with a customer managed key needs the key.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ["kms:GenerateDataKey*", "kms:Decrypt"],
        resources: [topicsKey.keyArn],
      }),
    );
    const objects = [prefixes.input, prefixes.output]
      .map((prefix) => prefix.replaceAll("/", "\\/"))
      .join("|");
    NagSuppressions.addResourceSuppressions(
      this.role,
      [
        {
          id: "AwsSolutions-IAM5",
          reason:
            "SageMaker reads the request objects under async/input/ and writes the answers under async/output/, one object per request; publishing to a topic under a customer managed key takes kms:GenerateDataKey* on that key only",
          appliesTo: [
            { regex: `/^Resource::<PipelineFilesBucket[0-9A-F]{8}\\.Arn>\\/(${objects})\\*$/g` },
            "Action::kms:GenerateDataKey*",
          ],
        },
      ],
      true,
    );
  }
}
