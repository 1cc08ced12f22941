/**
 * The event-driven pipeline: intake queue with its dead-letter queue, the decide function on it,
 * the decisions table, the event bus with its rules (auto → auto-action, human → review queue →
 * review intake,
 * rejected → inspection queue, upstream "Decision Requested" → intake), and the review and replay
 * functions, with least-privilege permissions. Settings come from `infra/topology.ts`, shared
 * with the local stand-ins.
 */
import { Duration, Stack } from "aws-cdk-lib";
import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as iam from "aws-cdk-lib/aws-iam";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as s3 from "aws-cdk-lib/aws-s3";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { EventPattern } from "../../shared/domain/event-pattern.ts";
import {
  DECIDE_FUNCTION,
  decideConcurrency,
  METRICS,
  RULES,
  SERVERLESS_DECIDE,
  TABLE_ACCESS,
  TARGET_FUNCTION,
} from "../../shared/domain/topology.ts";
import { BatchJobs } from "./batch-jobs.ts";
import { createDecisionsTable } from "./decisions-table.ts";
import { PipelineBucket } from "./pipeline-bucket.ts";
import { functionFactory, suppressFunctionFindings } from "./pipeline-function.ts";
import { createPipelineQueues } from "./pipeline-queues.ts";
import { ReviewAccess } from "./review-access.ts";
import { ScheduledJobs } from "./scheduled-jobs.ts";

/** Properties of {@link DecisionPipeline}. */
export interface DecisionPipelineProps {
  /** Name of the SageMaker endpoint the decide function calls. */
  readonly endpointName: string;
  /** Its ARN: InvokeEndpoint is allowed on this endpoint only. */
  readonly endpointArn: string;
  /** Fewest endpoint instances (the scaling minimum). @default 1 */
  readonly endpointMinInstances?: number;
  /** Most endpoint instances; the decide function's concurrency follows. @default 1 */
  readonly endpointMaxInstances?: number;
  /** Serverless endpoints cold-start: the decide function then waits longer per try. @default "realtime" */
  readonly endpointMode?: "realtime" | "serverless";
  /** Where the policy files are bundled from. @default events/policies */
  readonly policiesDir?: string;
  /** Concurrent batch-lane invocations of the decide function. @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
  /** Prefix of the reviewers' hosted sign-in domain. @default derived from the account and stack */
  readonly reviewDomainPrefix?: string;
}

/** Converts a pattern in EventBridge's JSON form to the CDK's. */
export function toCdkPattern(pattern: EventPattern): events.EventPattern {
  const { "detail-type": detailType, ...rest } = pattern as Record<string, unknown>;
  return { ...rest, ...(detailType ? { detailType } : {}) } as events.EventPattern;
}

/** Everything between the upstream systems and the endpoint's decisions. */
export class DecisionPipeline extends Construct {
  public readonly intakeQueue: sqs.Queue;
  public readonly deadLetterQueue: sqs.Queue;
  public readonly reviewQueue: sqs.Queue;
  /** The auto route's queue, consumed by the auto-action function. */
  public readonly autoActionQueue: sqs.Queue;
  /** Where auto-action messages go after the receive limit; `decide replay` can redrive it. */
  public readonly autoActionDeadLetterQueue: sqs.Queue;
  public readonly rejectedQueue: sqs.Queue;
  public readonly targetsDeadLetterQueue: sqs.Queue;
  public readonly table: dynamodb.Table;
  public readonly bus: events.EventBus;
  public readonly decideFunction: NodejsFunction;
  public readonly autoActionFunction: NodejsFunction;
  public readonly reviewFunction: NodejsFunction;
  public readonly reviewIntakeFunction: NodejsFunction;
  public readonly replayFunction: NodejsFunction;
  public readonly driftFunction: NodejsFunction;
  /** Proposes recalibrated policy versions from reviewers' labels, daily. */
  public readonly recalibrateFunction: NodejsFunction;
  /** The batch lane's queue. */
  public readonly batchQueue: sqs.Queue;
  /** Reads batch files dropped under `incoming/`. */
  public readonly batchIntakeFunction: NodejsFunction;
  /** Writes each batch's results and errors files, on a message its completion sends. */
  public readonly batchFilesFunction: NodejsFunction;
  /** The batch files step's queue, and its own dead-letter queue. */
  public readonly batchFilesQueue: sqs.Queue;
  public readonly batchFilesDeadLetterQueue: sqs.Queue;
  /** Calibration proposals (`calibration/`) and batch files. */
  public readonly bucket: s3.Bucket;
  /** Publishes each policy's review backlog every five minutes (the service-level alarms' metrics). */
  public readonly reviewBacklogFunction: NodejsFunction;
  public readonly reviewPageFunction: NodejsFunction;
  /** Sign-in, the HTTP API and its authorizer in front of the review pages and API. */
  public readonly reviewAccess: ReviewAccess;
  public readonly rules: Record<keyof typeof RULES, events.Rule>;

  constructor(scope: Construct, id: string, props: DecisionPipelineProps) {
    super(scope, id);
    const queues = createPipelineQueues(this);
    this.intakeQueue = queues.intake;
    this.deadLetterQueue = queues.deadLetters;
    this.reviewQueue = queues.review;
    this.autoActionQueue = queues.autoAction;
    this.autoActionDeadLetterQueue = queues.autoActionDeadLetters;
    this.rejectedQueue = queues.rejected;
    this.targetsDeadLetterQueue = queues.targetsDeadLetters;

    this.table = createDecisionsTable(this);

    this.bus = new events.EventBus(this, "Bus", { eventBusName: `${Stack.of(this).stackName}-decisions` });

    const shared = {
      DECISIONS_TABLE: this.table.tableName,
      EVENT_BUS_NAME: this.bus.eventBusName,
      POLICIES_DIR: "/var/task/policies",
      POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
      POWERTOOLS_LOG_LEVEL: "INFO",
    };
    const fn = functionFactory(this, {
      table: this.table,
      environment: shared,
      ...(props.policiesDir ? { policiesDir: props.policiesDir } : {}),
    });
    // A target function fed by a queue, with partial batch failures.
    const queueConsumer = (name: string, file: string, queue: sqs.Queue, tableAccess: readonly string[]) => {
      const created = fn(name, file, {
        memoryMiB: TARGET_FUNCTION.memoryMiB,
        timeoutSeconds: TARGET_FUNCTION.timeoutSeconds,
        tableAccess,
      });
      created.addEventSource(
        new SqsEventSource(queue, { batchSize: TARGET_FUNCTION.batchSize, reportBatchItemFailures: true }),
      );
      return created;
    };

    const concurrency = decideConcurrency({
      mode: props.endpointMode ?? "realtime",
      minInstances: props.endpointMinInstances ?? 1,
      maxInstances: props.endpointMaxInstances ?? 1,
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
    });
    this.decideFunction = fn("Decide", "decide.ts", {
      memoryMiB: DECIDE_FUNCTION.memoryMiB,
      timeoutSeconds: DECIDE_FUNCTION.timeoutSeconds,
      environment: {
        DECISION_ENDPOINT_NAME: props.endpointName,
        ...(props.endpointMode === "serverless"
          ? {
              ENDPOINT_TIMEOUT_MS: String(SERVERLESS_DECIDE.endpointTimeoutMs),
              ENDPOINT_ATTEMPTS: String(SERVERLESS_DECIDE.endpointAttempts),
            }
          : {
              ENDPOINT_TIMEOUT_MS: String(DECIDE_FUNCTION.endpointTimeoutMs),
              ENDPOINT_ATTEMPTS: String(DECIDE_FUNCTION.endpointAttempts),
            }),
        PUBLISH_LEASE_MS: String(DECIDE_FUNCTION.publishLeaseMs),
      },
      tableAccess: TABLE_ACCESS.Decide,
    });
    this.decideFunction.addEventSource(
      new SqsEventSource(this.intakeQueue, {
        batchSize: DECIDE_FUNCTION.batchSize,
        maxBatchingWindow: Duration.seconds(DECIDE_FUNCTION.maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency: concurrency.intake,
      }),
    );
    this.decideFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["sagemaker:InvokeEndpoint"], resources: [props.endpointArn] }),
    );
    this.bus.grantPutEventsTo(this.decideFunction);

    this.autoActionFunction = queueConsumer(
      "AutoAction",
      "auto-action.ts",
      this.autoActionQueue,
      TABLE_ACCESS.AutoAction,
    );
    this.bus.grantPutEventsTo(this.autoActionFunction);

    // The human route's consumer: queues each escalated item for review once per event id.
    this.reviewIntakeFunction = queueConsumer(
      "ReviewIntake",
      "review-intake.ts",
      this.reviewQueue,
      TABLE_ACCESS.ReviewIntake,
    );

    this.reviewFunction = fn("Review", "review.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.Review,
    });
    this.bus.grantPutEventsTo(this.reviewFunction);

    // The review pages, reached (with the review API) only through the authorized HTTP API.
    this.reviewPageFunction = fn("ReviewPage", "review-page.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.ReviewPage,
    });
    this.bus.grantPutEventsTo(this.reviewPageFunction);
    this.reviewAccess = new ReviewAccess(this, "ReviewAccess", {
      pageFunction: this.reviewPageFunction,
      apiFunction: this.reviewFunction,
      fn,
      ...(props.reviewDomainPrefix ? { domainPrefix: props.reviewDomainPrefix } : {}),
    });

    this.replayFunction = fn("Replay", "replay.ts", {
      memoryMiB: 256,
      timeoutSeconds: 300,
      environment: {
        DLQ_URL: this.deadLetterQueue.queueUrl,
        DLQ_ARN: this.deadLetterQueue.queueArn,
        INTAKE_QUEUE_URL: this.intakeQueue.queueUrl,
      },
      tableAccess: TABLE_ACCESS.Replay,
    });
    this.deadLetterQueue.grantConsumeMessages(this.replayFunction);
    this.intakeQueue.grantSendMessages(this.replayFunction);
    this.replayFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["sqs:StartMessageMoveTask"],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );

    this.bucket = new PipelineBucket(this, "Files").bucket;
    const jobs = new ScheduledJobs(this, "Jobs", {
      fn,
      bus: this.bus,
      bucket: this.bucket,
      failures: this.targetsDeadLetterQueue,
    });
    this.driftFunction = jobs.driftFunction;
    this.recalibrateFunction = jobs.recalibrateFunction;
    this.reviewBacklogFunction = jobs.reviewBacklogFunction;
    this.batchQueue = queues.batch;
    const batchJobs = new BatchJobs(this, "BatchJobs", {
      fn,
      bucket: this.bucket,
      queue: queues.batch,
      bus: this.bus,
      decideFunction: this.decideFunction,
      reviewFunctions: [this.reviewFunction, this.reviewPageFunction],
      failures: this.targetsDeadLetterQueue,
      maxConcurrency: concurrency.batch,
    });
    this.batchIntakeFunction = batchJobs.intakeFunction;
    this.batchFilesFunction = batchJobs.filesFunction;
    this.batchFilesQueue = batchJobs.filesQueue;
    this.batchFilesDeadLetterQueue = batchJobs.filesDeadLetterQueue;

    const rule = (name: keyof typeof RULES, target: events.IRuleTarget) =>
      new events.Rule(this, `${name[0]!.toUpperCase()}${name.slice(1)}Rule`, {
        eventBus: this.bus,
        description: RULES[name].description,
        eventPattern: toCdkPattern(RULES[name].pattern),
        targets: [target],
      });
    const targetOptions = {
      deadLetterQueue: this.targetsDeadLetterQueue,
      retryAttempts: 8,
      maxEventAge: Duration.hours(24),
    };
    this.rules = {
      auto: rule("auto", new targets.SqsQueue(this.autoActionQueue, targetOptions)),
      human: rule("human", new targets.SqsQueue(this.reviewQueue, targetOptions)),
      rejected: rule("rejected", new targets.SqsQueue(this.rejectedQueue, targetOptions)),
      requested: rule(
        "requested",
        new targets.SqsQueue(this.intakeQueue, {
          ...targetOptions,
          message: events.RuleTargetInput.fromEventPath("$.detail"),
        }),
      ),
    };

    for (const f of [
      this.reviewPageFunction,
      this.reviewAccess.authorizerFunction,
      this.reviewAccess.signInFunction,
      this.driftFunction,
      this.recalibrateFunction,
      this.batchIntakeFunction,
      this.batchFilesFunction,
      this.reviewBacklogFunction,
      this.decideFunction,
      this.autoActionFunction,
      this.reviewFunction,
      this.reviewIntakeFunction,
      this.replayFunction,
    ])
      suppressFunctionFindings(f);
  }
}
