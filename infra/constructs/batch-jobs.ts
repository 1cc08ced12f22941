/**
 * Batch jobs, deployed: a file dropped under `incoming/<policy>/` in the pipeline bucket starts
 * the intake function (S3 notification; asynchronous, so bounded retries and an on-failure queue),
 * which streams it onto the batch lane's queue; the decide function consumes that queue through a
 * second event source mapping whose maximum concurrency is a small share of its own, so a large
 * batch uses spare endpoint capacity and live items keep theirs. When a batch completes (and
 * after each later change, delayed), the decide, review and intake functions put a message on the
 * batch files queue; the batch files function, a step of its own, streams the members into the
 * results and errors files under `batches/` and announces the batch. Nothing may delete there.
 */
import { Duration, Stack } from "aws-cdk-lib";
import type * as events from "aws-cdk-lib/aws-events";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as s3n from "aws-cdk-lib/aws-s3-notifications";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import {
  decideBatchMapping,
  EVENT_SOURCE_MAPPINGS,
} from "../../shared/domain/topology/event-source-mapping.ts";
import {
  BATCH_FILES,
  BATCH_FILES_VISIBILITY_SECONDS,
  BATCH_LANE,
  MAX_RECEIVE_COUNT,
  TABLE_ACCESS,
} from "../../shared/domain/topology.ts";
import { type BatchLane, DEFAULT_BATCH_LANE } from "./batch-lane.ts";
import { grantObjects } from "./bucket-access.ts";
import type { functionFactory } from "./pipeline-function.ts";
import { eventSourceOf } from "./queue-consumer.ts";

/** Properties of {@link BatchJobs}. */
export interface BatchJobsProps {
  /** Creates the functions in the pipeline's scope (their ids stay `Pipeline<Name>`). */
  readonly fn: ReturnType<typeof functionFactory>;
  readonly bucket: s3.Bucket;
  readonly queue: sqs.IQueue;
  readonly bus: events.IEventBus;
  /** The decide function; none when the live lane runs on the async endpoint (`endpointMode: "async"`). */
  readonly decideFunction?: NodejsFunction;
  /** Functions that label batch items (they ask the files step for a rewrite). */
  readonly reviewFunctions: readonly NodejsFunction[];
  /** Where failed intake runs land. */
  readonly failures: sqs.IQueue;
  /** Concurrent batch invocations. @default BATCH_LANE.maxConcurrency */
  readonly maxConcurrency?: number;
  /** Records per invocation (`decideConcurrency` in the topology). */
  readonly batchSize: number;
  /** Who consumes the batch lane: the decide function ("realtime") or the async lane's submit function. @default DEFAULT_BATCH_LANE */
  readonly batchLane?: BatchLane;
}

/** The batch files queue and its dead-letter queue. */
function filesQueues(scope: Construct): { queue: sqs.Queue; deadLetterQueue: sqs.Queue } {
  const deadLetterQueue = new sqs.Queue(scope, "FilesDeadLetterQueue", {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  NagSuppressions.addResourceSuppressions(deadLetterQueue, [
    { id: "AwsSolutions-SQS3", reason: "This queue is itself a dead-letter queue" },
    { id: "Serverless-SQSRedrivePolicy", reason: "This queue is itself a dead-letter queue" },
  ]);
  const queue = new sqs.Queue(scope, "FilesQueue", {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(BATCH_FILES_VISIBILITY_SECONDS),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
  });
  return { queue, deadLetterQueue };
}

/** The CDK's own bucket-notifications helper (a singleton with a managed policy), suppressed once. */
function suppressNotificationsHelper(scope: Construct): void {
  const stack = Stack.of(scope);
  NagSuppressions.addResourceSuppressionsByPath(
    stack,
    `/${stack.node.path}/BucketNotificationsHandler050a0587b7544547bf325f094a3db834/Role/Resource`,
    [
      {
        id: "AwsSolutions-IAM4",
        reason: "The CDK's bucket-notifications helper uses the basic execution managed policy",
      },
      {
        id: "AwsSolutions-IAM5",
        reason:
          "The CDK's bucket-notifications helper: s3:PutBucketNotification takes its bucket from the request (its custom resource names this bucket only)",
        appliesTo: ["Resource::*"],
      },
    ],
    true,
  );
}

/** The intake function, the batch lane, the batch files step and the files' permissions. */
export class BatchJobs extends Construct {
  public readonly intakeFunction: NodejsFunction;
  /** Writes a batch's results and errors files and announces the batch. */
  public readonly filesFunction: NodejsFunction;
  /** Where a batch's completion (and each later change) asks for its files. */
  public readonly filesQueue: sqs.Queue;
  /** Where a files request lands after the receive limit. */
  public readonly filesDeadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: BatchJobsProps) {
    super(scope, id);
    const { queue, deadLetterQueue } = filesQueues(this);
    this.filesQueue = queue;
    this.filesDeadLetterQueue = deadLetterQueue;
    this.filesFunction = this.filesStep(props);
    this.intakeFunction = this.intake(props);

    // The batch lane: the same decide function, fed from its own queue at a bounded concurrency
    // (unless the async lane consumes it: `async-lane.ts`).
    if ((props.batchLane ?? DEFAULT_BATCH_LANE) === "realtime") {
      if (!props.decideFunction)
        throw new Error("the batch lane on the real-time endpoint needs the decide function");
      const sizes = { batchSize: props.batchSize, batch: props.maxConcurrency ?? BATCH_LANE.maxConcurrency };
      props.decideFunction.addEventSource(
        eventSourceOf({ queue: props.queue, ...decideBatchMapping(sizes) }),
      );
      // Its records' source tells the lanes apart in the oldest item's age the function reports.
      props.decideFunction.addEnvironment(FUNCTION_ENV.BATCH_QUEUE_ARN, props.queue.queueArn);
    }
    // The decide and review functions count items and labels: they never read or write the files.
    for (const fn of [...(props.decideFunction ? [props.decideFunction] : []), ...props.reviewFunctions])
      this.asksForFiles(fn);
    suppressNotificationsHelper(this);
  }

  /** Every function that settles batch items asks the files step through its queue. */
  private asksForFiles(fn: NodejsFunction): void {
    fn.addEnvironment(FUNCTION_ENV.BATCH_FILES_QUEUE_URL, this.filesQueue.queueUrl);
    this.filesQueue.grantSendMessages(fn);
  }

  /** Lets `fn` read and write the files under `batches/` (never delete). */
  private writesFiles(fn: NodejsFunction, props: BatchJobsProps): void {
    fn.addEnvironment(FUNCTION_ENV.BATCH_BUCKET, props.bucket.bucketName);
    grantObjects(props.bucket, fn, BATCH_LANE.filesPrefix, { read: true, write: true });
  }

  /** The batch files function, fed by the files queue. */
  private filesStep(props: BatchJobsProps): NodejsFunction {
    const fn = props.fn("BatchFiles", "batch-files.ts", {
      memoryMiB: BATCH_FILES.memoryMiB,
      timeoutSeconds: BATCH_FILES.timeoutSeconds,
      tableAccess: TABLE_ACCESS.BatchFiles,
    });
    this.writesFiles(fn, props);
    this.asksForFiles(fn);
    props.bus.grantPutEventsTo(fn);
    fn.addEventSource(eventSourceOf({ queue: this.filesQueue, ...EVENT_SOURCE_MAPPINGS.batchFiles }));
    return fn;
  }

  /** The intake function, started by a file under `incoming/`. */
  private intake(props: BatchJobsProps): NodejsFunction {
    const fn = props.fn("BatchIntake", "batch-intake.ts", {
      memoryMiB: BATCH_LANE.intakeMemoryMiB,
      timeoutSeconds: BATCH_LANE.intakeTimeoutSeconds,
      environment: { [FUNCTION_ENV.BATCH_QUEUE_URL]: props.queue.queueUrl },
      tableAccess: TABLE_ACCESS.BatchIntake,
    });
    this.writesFiles(fn, props);
    this.asksForFiles(fn);
    grantObjects(props.bucket, fn, BATCH_LANE.incomingPrefix, { read: true });
    props.queue.grantSendMessages(fn);
    fn.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new destinations.SqsDestination(props.failures),
    });
    props.bucket.addEventNotification(s3.EventType.OBJECT_CREATED, new s3n.LambdaDestination(fn), {
      prefix: BATCH_LANE.incomingPrefix,
    });
    return fn;
  }
}
