/**
 * The pipeline's queues: the intake and the batch lane, the rule targets' queues (auto action,
 * review) each with its own dead-letter queue, the rejected items' inspection queue, and the job
 * failures queue. All encrypted and TLS-only; every consumed queue dead-letters into a queue of
 * its own after the receive limit, so SQS's redrive can send each letter back to where it came
 * from (redrive to the source works only for messages that arrived through a redrive policy).
 * Created in the caller's scope, so their logical ids stay those of a flat stack.
 */
import { Duration } from "aws-cdk-lib";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";
import {
  DECIDE_QUEUES,
  INTAKE_VISIBILITY_SECONDS,
  MAX_RECEIVE_COUNT,
  TARGET_VISIBILITY_SECONDS,
} from "../../shared/domain/topology.ts";

/** The queues, by role. */
export interface PipelineQueues {
  readonly intake: sqs.Queue;
  /** The intake's dead letters. */
  readonly deadLetters: sqs.Queue;
  /** The batch lane: batch items, consumed by the decide function at a bounded concurrency. */
  readonly batch: sqs.Queue;
  readonly batchDeadLetters: sqs.Queue;
  readonly review: sqs.Queue;
  readonly reviewDeadLetters: sqs.Queue;
  readonly autoAction: sqs.Queue;
  readonly autoActionDeadLetters: sqs.Queue;
  /** The rejected items, kept for inspection (nothing consumes it). */
  readonly rejected: sqs.Queue;
  /**
   * On-failure records of the asynchronously invoked functions and the schedules' undelivered
   * events. Its construct id is its former name ("TargetsDeadLetterQueue"), kept so that an
   * update keeps the queue and what it holds.
   */
  readonly jobFailures: sqs.Queue;
}

const secureQueue = (scope: Construct, id: string, extra: Partial<sqs.QueueProps> = {}) =>
  new sqs.Queue(scope, id, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, ...extra });

/** A dead-letter queue: encrypted, TLS only, messages kept the longest SQS allows (14 days). */
export function createDeadLetterQueue(scope: Construct, id: string): sqs.Queue {
  const queue = secureQueue(scope, id, { retentionPeriod: Duration.days(14) });
  NagSuppressions.addResourceSuppressions(queue, [
    { id: "AwsSolutions-SQS3", reason: "This queue is itself a dead-letter queue" },
    { id: "Serverless-SQSRedrivePolicy", reason: "This queue is itself a dead-letter queue" },
  ]);
  return queue;
}

/** Creates the queues in `scope`. */
export function createPipelineQueues(scope: Construct): PipelineQueues {
  const deadLetters = createDeadLetterQueue(scope, "DeadLetterQueue");
  const jobFailures = createDeadLetterQueue(scope, "TargetsDeadLetterQueue");
  const autoActionDeadLetters = createDeadLetterQueue(scope, "AutoActionDeadLetterQueue");
  const batchDeadLetters = createDeadLetterQueue(scope, "BatchDeadLetterQueue");
  const reviewDeadLetters = createDeadLetterQueue(scope, "ReviewDeadLetterQueue");
  const redrive = (queue: sqs.IQueue, maxReceiveCount: number = MAX_RECEIVE_COUNT) => ({
    deadLetterQueue: { queue, maxReceiveCount },
  });
  // The decide function's queues: it dead-letters failing items itself; SQS's limit is a backstop.
  const decideQueue = (deadLetterQueue: sqs.IQueue) => ({
    visibilityTimeout: Duration.seconds(INTAKE_VISIBILITY_SECONDS),
    retentionPeriod: Duration.days(DECIDE_QUEUES.retentionDays),
    ...redrive(deadLetterQueue, DECIDE_QUEUES.maxReceiveCount),
  });
  const rejected = secureQueue(scope, "RejectedQueue", { retentionPeriod: Duration.days(14) });
  NagSuppressions.addResourceSuppressions(rejected, [
    {
      id: "AwsSolutions-SQS3",
      reason:
        "An inspection queue nothing consumes: its messages wait for a person, no receive limit applies",
    },
    {
      id: "Serverless-SQSRedrivePolicy",
      reason:
        "An inspection queue nothing consumes: its messages wait for a person, no receive limit applies",
    },
  ]);
  return {
    deadLetters,
    jobFailures,
    autoActionDeadLetters,
    batchDeadLetters,
    reviewDeadLetters,
    intake: secureQueue(scope, "IntakeQueue", decideQueue(deadLetters)),
    // Its own dead-letter queue: a replay brings batch items back to the batch lane, at its
    // concurrency, never into the live intake.
    batch: secureQueue(scope, "BatchQueue", decideQueue(batchDeadLetters)),
    // The targets' queues: durable, retried, dead-lettered after the receive limit.
    review: secureQueue(scope, "ReviewQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      ...redrive(reviewDeadLetters),
    }),
    autoAction: secureQueue(scope, "AutoActionQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      ...redrive(autoActionDeadLetters),
    }),
    rejected,
  };
}
