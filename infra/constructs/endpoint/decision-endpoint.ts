/**
 * The decision endpoint on SageMaker: model, endpoint configuration and endpoint, the container
 * from `endpoint/Dockerfile` (or an image URI), the GGUF model from S3. Two modes: real-time
 * (instances, auto scaling on concurrent requests per instance, `endpoint-scaling.ts`; the default) and serverless (pay per
 * use, scale to zero; CPU only, 1 to 6 GB of memory, 4 MB payloads, cold starts; no network
 * isolation or storage key, which Serverless Inference does not support). A real-time endpoint's
 * updates deploy blue/green (`blue-green-deployment.ts`).
 *
 * Secure by default: the model runs with network isolation (the container reaches nothing: it
 * needs no network, the model archive is fetched by SageMaker itself), which is stronger than
 * placing it in a VPC; the ML storage volume is encrypted with a customer managed key with
 * rotation (where the instance type has EBS storage; instance-store NVMe volumes are encrypted by
 * the hardware and SageMaker refuses a key for them); and the role may pull from the one image
 * repository in use.
 */
import { RemovalPolicy, Stack } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as iam from "aws-cdk-lib/aws-iam";
import * as kms from "aws-cdk-lib/aws-kms";
import * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { endpointAdmission } from "../../../shared/domain/capacity-plan.ts";
import { CONTAINER_ENV } from "../../../shared/domain/container-env.ts";
import { ENDPOINT_DEPLOYMENT } from "../../../shared/domain/topology.ts";
import {
  deployBlueGreen,
  deploymentBakingSeconds,
  deploymentOverlapSecondsOf,
} from "./blue-green-deployment.ts";
import { type GuardrailAlarms, guardrailAlarms } from "./deployment-guardrail.ts";
import { endpointContainer } from "./endpoint-container.ts";
import { endpointNameOf, variantNameOf } from "./endpoint-names.ts";
import { EndpointScaling } from "./endpoint-scaling.ts";
import { hasInstanceStorage, isGpuInstance } from "./instance-types.ts";
import {
  checkServerlessSettings,
  SERVERLESS_LIMITS,
  type ServerlessSettings,
} from "./serverless-settings.ts";
import { servedModelsEnvironment, type TierModel } from "./tier-models.ts";

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
  /** Target concurrent requests per instance for scaling. @default derived from the measured time per item */
  readonly concurrentRequestsTarget?: number;
  /** A prebuilt image (e.g. in ECR) instead of building `endpoint/Dockerfile`. @default build from the repository */
  readonly imageUri?: string;
  /** Evaluation threads. @default the instance's vCPUs (the server's own default) */
  readonly threads?: number;
  /** Tokens per prompt. @default 4096 */
  readonly contextSize?: number;
  /** Concurrent batch-lane invocations of the decide function (they share the admission). @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
  /** A cascade's later models, served by name from the same archive (`tier-models.ts`). @default none */
  readonly tierModels?: readonly TierModel[];
}

/** Serverless settings once checked. */
type CheckedServerless = ReturnType<typeof checkServerlessSettings>;

/** The SageMaker endpoint serving decisions. */
export class DecisionEndpoint extends Construct {
  public readonly endpoint: sagemaker.CfnEndpoint;
  /** The endpoint's name: fixed for a real-time endpoint (it names the instance type), generated for serverless. */
  public readonly endpointName: string;
  /** The production variant's name: the instance type (`ml-c6i-xlarge`), or `AllTraffic` for serverless. */
  public readonly variantName: string;
  public readonly endpointArn: string;
  public readonly instanceType: string;
  public readonly role: iam.Role;
  /** The key of the ML storage volume; undefined on instance types with instance storage and serverless. */
  public readonly storageKey: kms.Key | undefined;
  public readonly mode: "realtime" | "serverless";
  /** Most requests the endpoint runs at once (instances × 1, or the serverless concurrency). */
  public readonly maxConcurrency: number;
  /** The scaling of a real-time endpoint; undefined for serverless, which scales itself. */
  public readonly scaling: EndpointScaling | undefined;
  /** The alarms a deployment rolls back on, on the new fleet's own metrics (real-time only). */
  public readonly guardrail: GuardrailAlarms | undefined;

  /** Seconds each stage of a deployment bakes (`blue-green-deployment.ts`). */
  get bakingSeconds(): number {
    return deploymentBakingSeconds();
  }

  /**
   * Seconds a deployment may run two fleets under this variant's name: their instances' metrics
   * add up meanwhile. 0 for serverless.
   */
  get deploymentOverlapSeconds(): number {
    if (this.mode === "serverless") return 0;
    return deploymentOverlapSecondsOf();
  }

  constructor(scope: Construct, id: string, props: DecisionEndpointProps) {
    super(scope, id);
    this.mode = props.mode ?? "realtime";
    const serverless =
      this.mode === "serverless"
        ? checkServerlessSettings(props.serverless ?? {}, props.instanceType)
        : undefined;
    this.instanceType = serverless ? "serverless" : (props.instanceType ?? "ml.c6i.xlarge");
    const gpu = !serverless && isGpuInstance(this.instanceType);
    this.variantName = serverless ? "AllTraffic" : variantNameOf(this.instanceType);
    // A real-time endpoint is named after its variant, so a new instance type is a new endpoint
    // (CloudFormation creates it, moves every reference, then deletes the old one): SageMaker
    // refuses to change the instance type of, or remove, a variant registered with auto scaling.
    // Every other update keeps the endpoint and its variant and retains the instance count that
    // scaling reached, instead of resetting it to the initial count.
    const name = serverless ? undefined : endpointNameOf(Stack.of(this).stackName, this.variantName);
    const { image, role, logs } = endpointContainer(this, { ...props, gpu, name });
    this.role = role;
    const model = this.createModel(props, image, gpu, serverless);
    this.storageKey =
      serverless || hasInstanceStorage(this.instanceType)
        ? undefined
        : new kms.Key(this, "StorageKey", {
            enableKeyRotation: true,
            description: "Encrypts the decision endpoint's ML storage volumes",
            removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
          });
    const config = new sagemaker.CfnEndpointConfig(this, "Config", {
      ...(this.storageKey ? { kmsKeyId: this.storageKey.keyArn } : {}),
      productionVariants: [this.variant(props, model, serverless)],
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
      ...(name ? { endpointName: name, retainAllVariantProperties: true } : {}),
    });
    // Its log group has its retention before SageMaker logs (SageMaker's own never expires).
    if (logs) this.endpoint.node.addDependency(logs);
    this.endpointName = name ?? this.endpoint.attrEndpointName;
    // Ref of AWS::SageMaker::Endpoint is its ARN.
    this.endpointArn = this.endpoint.ref;
    this.maxConcurrency = serverless ? serverless.maxConcurrency : (props.maxInstanceCount ?? 4);
    // Each deployment makes a new configuration; the alarms follow its name, so they see the new fleet.
    this.guardrail = serverless ? undefined : guardrailAlarms(this, this, config.attrEndpointConfigName);
    this.scaling = serverless
      ? undefined
      : // Named after the variant: a new instance type brings a new scalable target and new
        // policies (whose names are fixed, so they could not be replaced in place).
        new EndpointScaling(this, `Scaling-${this.variantName}`, {
          endpoint: this.endpoint,
          endpointName: this.endpointName,
          variantName: this.variantName,
          minCapacity: props.initialInstanceCount ?? 1,
          maxCapacity: props.maxInstanceCount ?? 4,
          ...(props.concurrentRequestsTarget
            ? { concurrentRequestsTarget: props.concurrentRequestsTarget }
            : {}),
        });
  }

  /**
   * Deploys every update of a real-time endpoint blue/green: a canary of half the new fleet takes
   * its share of the traffic first, then all of it; each stage bakes long enough for every
   * rollback alarm's whole window: the new fleet's own (`deployment-guardrail.ts`) and `others`
   * (the decide function's endpoint failures). Any of them firing rolls traffic back.
   */
  rollbackOn(others: readonly cloudwatch.Alarm[]): void {
    const guardrail = this.guardrail;
    if (!guardrail) return; // Serverless has one fleet: nothing to bake.
    deployBlueGreen(this.endpoint, this.role, [
      guardrail.refusing,
      guardrail.slower,
      guardrail.silent,
      ...others,
    ]);
  }

  /** The model: the image, the archive, the container's settings, network isolation where SageMaker allows it. */
  private createModel(
    props: DecisionEndpointProps,
    image: string,
    gpu: boolean,
    serverless: CheckedServerless | undefined,
  ): sagemaker.CfnModel {
    // The admission queue and deadline fit the decide function's concurrency (the topology).
    const admission = endpointAdmission({
      mode: this.mode,
      minInstances: props.initialInstanceCount ?? 1,
      maxInstances: serverless ? serverless.maxConcurrency : (props.maxInstanceCount ?? 4),
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
    });
    const environment: Record<string, string> = {
      [CONTAINER_ENV.DECIDE_GPU]: gpu ? "cuda" : "off",
      [CONTAINER_ENV.DECIDE_QUEUE_SIZE]: String(admission.queueSize),
      [CONTAINER_ENV.DECIDE_DEADLINE_MS]: String(admission.deadlineMs),
      ...(props.threads ? { [CONTAINER_ENV.DECIDE_THREADS]: String(props.threads) } : {}),
      ...(props.contextSize ? { [CONTAINER_ENV.DECIDE_CONTEXT_SIZE]: String(props.contextSize) } : {}),
      ...servedModelsEnvironment(props.tierModels ?? []),
    };
    if (serverless) {
      // Serverless answers at most 4 MB; one model copy per instance, so one prefix slot per
      // policy fits in the memory left after the model (the budget scales with the memory size).
      environment[CONTAINER_ENV.DECIDE_BODY_LIMIT] = String(SERVERLESS_LIMITS.payloadBytes);
      environment[CONTAINER_ENV.DECIDE_PREFIX_CACHE_MB] = String(
        Math.max(64, Math.floor(serverless.memoryMiB / 8)),
      );
    }
    const model = new sagemaker.CfnModel(this, "Model", {
      executionRoleArn: this.role.roleArn,
      // Serverless Inference does not support network isolation (nor a VPC): the container still
      // needs no network, and its role allows only the model archive and the image.
      enableNetworkIsolation: !serverless,
      primaryContainer: { image, modelDataUrl: `s3://${props.modelBucket}/${props.modelKey}`, environment },
    });
    model.node.addDependency(this.role);
    if (serverless)
      NagSuppressions.addResourceSuppressions(model, [
        {
          id: "AwsSolutions-SM1",
          reason:
            "Serverless Inference supports neither a VPC nor network isolation; the container needs no network",
        },
      ]);
    return model;
  }

  /** The one production variant: instances, or a serverless configuration. */
  private variant(
    props: DecisionEndpointProps,
    model: sagemaker.CfnModel,
    serverless: CheckedServerless | undefined,
  ): sagemaker.CfnEndpointConfig.ProductionVariantProperty {
    if (serverless)
      return {
        variantName: this.variantName,
        modelName: model.attrModelName,
        initialVariantWeight: 1,
        serverlessConfig: {
          memorySizeInMb: serverless.memoryMiB,
          maxConcurrency: serverless.maxConcurrency,
          ...(serverless.provisionedConcurrency
            ? { provisionedConcurrency: serverless.provisionedConcurrency }
            : {}),
        },
      };
    return {
      variantName: this.variantName,
      modelName: model.attrModelName,
      instanceType: this.instanceType,
      initialInstanceCount: props.initialInstanceCount ?? 1,
      initialVariantWeight: 1,
      containerStartupHealthCheckTimeoutInSeconds: ENDPOINT_DEPLOYMENT.containerStartupSeconds,
      // An instance admits two calls and refuses the rest (503 queue_full, then a backoff of 30 s
      // or more): SageMaker's default random routing refuses calls while other instances stand
      // idle, and the capacity model needed 1.8 times the busy instance count to keep up.
      routingConfig: { routingStrategy: "LEAST_OUTSTANDING_REQUESTS" },
    };
  }
}
