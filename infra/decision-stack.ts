/**
 * The one stack: the CPU-backed decision endpoint and the pipeline together, with operations.
 * Deploy-time choices are CloudFormation parameters (model location) and context values
 * (instance type, counts, image), so one synthesized template serves every environment.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Annotations, CfnOutput, CfnParameter, Stack, type StackProps } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { parsePolicy } from "../shared/domain/policy/policy.ts";
import { REVIEW } from "../shared/domain/topology.ts";
import { AsyncLaneAlarms } from "./constructs/async/async-alarms.ts";
import { AsyncDecisionEndpoint } from "./constructs/async/async-endpoint.ts";
import { AsyncLane } from "./constructs/async/async-lane.ts";
import { AuditJobs, autoErrorBudgets } from "./constructs/audit-jobs.ts";
import {
  type BatchLane,
  DEFAULT_BATCH_LANE,
  refuseAsyncLiveLaneWithRealtimeBatch,
} from "./constructs/batch-lane.ts";
import { deadLetterRoutesOf } from "./constructs/dead-letter-routes.ts";
import { DecisionPipeline } from "./constructs/decision-pipeline.ts";
import { DecisionEndpoint } from "./constructs/endpoint/decision-endpoint.ts";
import type { ServerlessSettings } from "./constructs/endpoint/serverless-settings.ts";
import type { TierModel } from "./constructs/endpoint/tier-models.ts";
import { EventContracts } from "./constructs/event-contracts.ts";
import { Operations } from "./constructs/operations/operations.ts";

/** The policies bundled with the functions. */
const POLICIES_DIR = fileURLToPath(new URL("../events/policies", import.meta.url));

/**
 * Each policy's review service level in minutes (its latest version's `reviewWithinMinutes`, else
 * the default), read from the bundled policy files at synth time: one alarm per policy.
 */
export function reviewServiceLevels(dir: string): Record<string, number> {
  const latest = new Map<string, { version: number; minutes: number }>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const policy = parsePolicy(JSON.parse(readFileSync(join(dir, file), "utf8")), file);
    const minutes = policy.reviewWithinMinutes ?? REVIEW.defaultServiceLevelMinutes;
    if (!policy.candidate && (latest.get(policy.id)?.version ?? 0) < policy.version)
      latest.set(policy.id, { version: policy.version, minutes });
  }
  return Object.fromEntries([...latest].map(([id, { minutes }]) => [id, minutes]));
}

/** Properties of {@link DecisionStack}. */
export interface DecisionStackProps extends StackProps {
  /** SageMaker instance type. @default "ml.c6i.xlarge" */
  readonly instanceType?: string;
  /** Endpoint instances at start. @default 1 */
  readonly initialInstanceCount?: number;
  /** Endpoint instances at most. @default 4 */
  readonly maxInstanceCount?: number;
  /** A prebuilt image URI instead of building endpoint/Dockerfile. */
  readonly imageUri?: string;
  /** Alarm email. */
  readonly alarmEmail?: string;
  /**
   * Real-time instances (default), pay-per-use Serverless Inference, or "async": the live intake
   * runs on the async endpoint too (with the async batch lane, which it needs), and no real-time
   * endpoint is deployed, so inference costs nothing idle; decisions may wait minutes (a wake
   * from zero). @default "realtime"
   */
  readonly endpointMode?: "realtime" | "serverless" | "async";
  /** Concurrent batch-lane invocations of the decide function (2 to 1,000). @default 2 */
  readonly batchMaxConcurrency?: number;
  /** Serverless memory and concurrency (endpointMode "serverless"). */
  readonly serverless?: ServerlessSettings;
  /**
   * The batch lane: SageMaker Asynchronous Inference (an async endpoint that scales to zero, fed
   * by objects of many items), or the real-time endpoint through the decide function. @default DEFAULT_BATCH_LANE
   */
  readonly batchLane?: BatchLane;
  /** The async endpoint's instance type (CPU or GPU). @default the real-time instance type, or ml.c6i.xlarge */
  readonly asyncInstanceType?: string;
  /** The async endpoint's most instances. @default ASYNC_LANE.defaultMaxInstances */
  readonly asyncMaxInstanceCount?: number;
  /** Reserve concurrency for the sign-in, authorizer and review functions. @default true */
  readonly reserveConcurrency?: boolean;
  /** A cascade's later models, in the model archive beside the first (`tier-models.ts`). @default none */
  readonly tierModels?: readonly TierModel[];
}

/** The decision endpoint and pipeline. */
export class DecisionStack extends Stack {
  /** The real-time or serverless endpoint; none with `endpointMode: "async"`. */
  public readonly endpoint: DecisionEndpoint | undefined;
  public readonly pipeline: DecisionPipeline;
  public readonly operations: Operations;
  /** The daily audit estimate and the per-policy error-budget alarms. */
  public readonly audits: AuditJobs;
  /** The schema registry with the event and item contracts. */
  public readonly contracts: EventContracts;
  /** The async endpoint, its lane and alarms (the batch lane on SageMaker Asynchronous Inference). */
  public readonly asyncLane:
    | { endpoint: AsyncDecisionEndpoint; lane: AsyncLane; alarms: AsyncLaneAlarms }
    | undefined;

  constructor(scope: Construct, id: string, props: DecisionStackProps = {}) {
    super(scope, id, props);
    refuseAsyncLiveLaneWithRealtimeBatch(props.endpointMode, props.batchLane);
    const modelBucket = new CfnParameter(this, "ModelBucket", {
      type: "String",
      description: "S3 bucket of the model archive (model.tar.gz: the .gguf, any -c tierModels files)",
    });
    const modelKey = new CfnParameter(this, "ModelKey", {
      type: "String",
      default: "models/decision/model.tar.gz",
      description: "Key of the model archive in that bucket",
    });
    this.endpoint =
      props.endpointMode === "async"
        ? undefined
        : this.createEndpoint(props, modelBucket.valueAsString, modelKey.valueAsString);
    this.pipeline = new DecisionPipeline(this, "Pipeline", {
      ...(this.endpoint
        ? {
            endpointName: this.endpoint.endpointName,
            endpointArn: this.endpoint.endpointArn,
            endpointMaxInstances: this.endpoint.maxConcurrency,
            endpointMode: this.endpoint.mode,
          }
        : { endpointMode: "async" as const }),
      endpointMinInstances: props.initialInstanceCount ?? 1,
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
      batchLane: props.batchLane ?? DEFAULT_BATCH_LANE,
      ...(props.reserveConcurrency === false ? { reserveConcurrency: false } : {}),
      ...(props.tierModels && this.endpoint ? { tierModels: props.tierModels } : {}),
    });
    this.operations = new Operations(this, "Operations", {
      pipeline: this.pipeline,
      ...(this.endpoint ? { endpoint: this.endpoint } : {}),
      ...(props.alarmEmail ? { alarmEmail: props.alarmEmail } : {}),
      reviewServiceLevels: reviewServiceLevels(POLICIES_DIR),
    });
    this.audits = new AuditJobs(this, "Audits", {
      table: this.pipeline.table,
      busName: this.pipeline.bus.eventBusName,
      alarms: this.operations,
      health: this.operations.health,
      failures: this.pipeline.queues.jobFailures,
      budgets: autoErrorBudgets(POLICIES_DIR),
    });

    this.asyncLane = this.createAsyncLane(props, modelBucket.valueAsString, modelKey.valueAsString);

    // A deployment whose new fleet answers with errors rolls back.
    const { endpointErrors } = this.operations.alarms;
    if (this.endpoint && endpointErrors) this.endpoint.rollbackOn([endpointErrors]);

    this.contracts = new EventContracts(this, "Contracts");
    new CfnOutput(this, "SchemaRegistryName", { value: this.contracts.registry.attrRegistryName });
    if (this.endpoint) new CfnOutput(this, "EndpointName", { value: this.endpoint.endpointName });
    new CfnOutput(this, "IntakeQueueUrl", { value: this.pipeline.queues.intake.queueUrl });
    new CfnOutput(this, "DeadLetterQueueUrl", { value: this.pipeline.queues.deadLetters.queueUrl });
    new CfnOutput(this, "DeadLetterQueueArn", { value: this.pipeline.queues.deadLetters.queueArn });
    new CfnOutput(this, "DeadLetterRoutes", {
      value: this.toJsonString(deadLetterRoutesOf(this.pipeline.deadLetterSources)),
      description:
        "Each dead-letter queue and where its letters go home: npx decide replay --from SOURCE --routes '<this>'",
    });
    new CfnOutput(this, "AlarmTopicArn", {
      value: this.operations.topic.topicArn,
      description:
        "Every alarm notifies this topic: subscribe on-call to it (or deploy with -c alarmEmail=...)",
    });
    if (!props.alarmEmail)
      Annotations.of(this).addWarningV2(
        "decision-pipeline:alarms-without-subscriber",
        "No -c alarmEmail: the alarms notify the AlarmTopicArn topic, which has no subscriber until you add one",
      );
    new CfnOutput(this, "DecisionsTable", { value: this.pipeline.table.tableName });
    new CfnOutput(this, "EventBusName", { value: this.pipeline.bus.eventBusName });
    new CfnOutput(this, "PipelineBucketName", { value: this.pipeline.bucket.bucketName });
  }

  /** The real-time or serverless endpoint that the decide function calls. */
  private createEndpoint(props: DecisionStackProps, modelBucket: string, modelKey: string) {
    return new DecisionEndpoint(this, "Endpoint", {
      modelBucket,
      modelKey,
      ...(props.instanceType ? { instanceType: props.instanceType } : {}),
      initialInstanceCount: props.initialInstanceCount ?? 1,
      maxInstanceCount: props.maxInstanceCount ?? 4,
      ...(props.imageUri ? { imageUri: props.imageUri } : {}),
      ...(props.endpointMode === "serverless" ? { mode: "serverless" as const } : {}),
      ...(props.serverless ? { serverless: props.serverless } : {}),
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
      ...(props.tierModels ? { tierModels: props.tierModels } : {}),
    });
  }

  /**
   * The async endpoint (same image and model as the real-time one), the lane's functions and their
   * alarms; none with `batchLane: "realtime"`.
   */
  private createAsyncLane(props: DecisionStackProps, modelBucket: string, modelKey: string) {
    if ((props.batchLane ?? DEFAULT_BATCH_LANE) !== "async") return undefined;
    const endpoint = new AsyncDecisionEndpoint(this, "AsyncEndpoint", {
      modelBucket,
      modelKey,
      bucket: this.pipeline.bucket,
      ...((props.asyncInstanceType ?? props.instanceType)
        ? { instanceType: props.asyncInstanceType ?? props.instanceType }
        : {}),
      ...(props.asyncMaxInstanceCount ? { maxInstanceCount: props.asyncMaxInstanceCount } : {}),
      ...(props.imageUri ? { imageUri: props.imageUri } : {}),
      ...(props.tierModels ? { tierModels: props.tierModels } : {}),
    });
    const intake = props.endpointMode === "async";
    // A cascade's later models are asked of the real-time endpoint that serves them (none under endpointMode=async).
    const laterTiers =
      this.endpoint && props.tierModels?.length
        ? {
            endpointName: this.endpoint.endpointName,
            endpointArn: this.endpoint.endpointArn,
            tierModels: props.tierModels,
          }
        : undefined;
    const lane = new AsyncLane(this, "AsyncLane", {
      pipeline: this.pipeline,
      endpoint,
      intake,
      ...(laterTiers ? { laterTiers } : {}),
    });
    const alarms = new AsyncLaneAlarms(this, "AsyncAlarms", { endpoint, lane, operations: this.operations });
    new CfnOutput(this, "AsyncEndpointName", { value: endpoint.endpointName });
    new CfnOutput(this, "AsyncNotificationsDeadLetterQueueArn", {
      value: lane.notificationsDeadLetters.queueArn,
      description:
        "Async notifications the result function could not settle: after a fix, aws sqs start-message-move-task --source-arn <this>",
    });
    return { endpoint, lane, alarms };
  }
}
