/**
 * Batch jobs, deployed: a file dropped under `incoming/<policy>/` in the pipeline bucket starts
 * the intake function (S3 notification; asynchronous, so bounded retries and an on-failure queue),
 * which streams it onto the batch lane's queue; the decide function consumes that queue through a
 * second event source mapping whose maximum concurrency is a small share of its own, so a large
 * batch uses spare endpoint capacity and live items keep theirs. The decide and review functions
 * write the batch's results and errors files under `batches/`; nothing may delete there.
 */
import { Duration, Stack } from "aws-cdk-lib";
import type * as events from "aws-cdk-lib/aws-events";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import * as s3 from "aws-cdk-lib/aws-s3";
import * as s3n from "aws-cdk-lib/aws-s3-notifications";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { BATCH_LANE, DECIDE_FUNCTION, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import type { functionFactory } from "./pipeline-function.ts";

/** Properties of {@link BatchJobs}. */
export interface BatchJobsProps {
  /** Creates the functions in the pipeline's scope (their ids stay `Pipeline<Name>`). */
  readonly fn: ReturnType<typeof functionFactory>;
  readonly bucket: s3.Bucket;
  readonly queue: sqs.IQueue;
  readonly bus: events.IEventBus;
  readonly decideFunction: NodejsFunction;
  /** Functions that label batch items (they rewrite the results file with the labels). */
  readonly reviewFunctions: readonly NodejsFunction[];
  /** Where failed intake runs land. */
  readonly failures: sqs.IQueue;
  /** Concurrent batch invocations. @default BATCH_LANE.maxConcurrency */
  readonly maxConcurrency?: number;
  /** Records per invocation (`decideConcurrency` in the topology). */
  readonly batchSize: number;
}

/** The intake function, the batch lane and the files' permissions. */
export class BatchJobs extends Construct {
  public readonly intakeFunction: NodejsFunction;

  constructor(scope: Construct, id: string, props: BatchJobsProps) {
    super(scope, id);
    const files = `${BATCH_LANE.filesPrefix}*`;
    const batchFiles = (fn: NodejsFunction) => {
      fn.addEnvironment("BATCH_BUCKET", props.bucket.bucketName);
      props.bucket.grantRead(fn, files);
      props.bucket.grantPut(fn, files);
    };

    this.intakeFunction = props.fn("BatchIntake", "batch-intake.ts", {
      memoryMiB: BATCH_LANE.intakeMemoryMiB,
      timeoutSeconds: BATCH_LANE.intakeTimeoutSeconds,
      environment: { BATCH_QUEUE_URL: props.queue.queueUrl },
      tableAccess: TABLE_ACCESS.BatchIntake,
    });
    batchFiles(this.intakeFunction);
    props.bucket.grantRead(this.intakeFunction, `${BATCH_LANE.incomingPrefix}*`);
    props.queue.grantSendMessages(this.intakeFunction);
    props.bus.grantPutEventsTo(this.intakeFunction);
    this.intakeFunction.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new destinations.SqsDestination(props.failures),
    });
    props.bucket.addEventNotification(
      s3.EventType.OBJECT_CREATED,
      new s3n.LambdaDestination(this.intakeFunction),
      {
        prefix: BATCH_LANE.incomingPrefix,
      },
    );

    // The batch lane: the same decide function, fed from its own queue at a bounded concurrency.
    props.decideFunction.addEventSource(
      new SqsEventSource(props.queue, {
        batchSize: props.batchSize,
        maxBatchingWindow: Duration.seconds(DECIDE_FUNCTION.maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency: props.maxConcurrency ?? BATCH_LANE.maxConcurrency,
      }),
    );
    batchFiles(props.decideFunction);
    for (const fn of props.reviewFunctions) batchFiles(fn);

    // The notification's helper function is the CDK's own (a singleton with a managed policy).
    const stack = Stack.of(this);
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
          reason: "The CDK's bucket-notifications helper may configure notifications on this bucket only",
        },
      ],
      true,
    );
  }
}
