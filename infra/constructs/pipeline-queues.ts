/**
 * The pipeline's queues: the intake with its dead-letter queue, the batch lane, the rule targets' queues (auto
 * action, review, rejected) and their dead-letter queues. All encrypted and TLS-only; every
 * consumed queue dead-letters after the receive limit. Created in the caller's scope, so their
 * logical ids stay those of a flat stack.
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
  readonly deadLetters: sqs.Queue;
  readonly review: sqs.Queue;
  readonly autoAction: sqs.Queue;
  readonly autoActionDeadLetters: sqs.Queue;
  readonly rejected: sqs.Queue;
  readonly targetsDeadLetters: sqs.Queue;
  /** The batch lane: batch items, consumed by the decide function at a bounded concurrency. */
  readonly batch: sqs.Queue;
}

/** Creates the queues in `scope`. */
export function createPipelineQueues(scope: Construct): PipelineQueues {
  const secureQueue = (name: string, extra: Partial<sqs.QueueProps> = {}) =>
    new sqs.Queue(scope, name, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, ...extra });
  const deadLetterQueue = (name: string) => {
    const queue = secureQueue(name, { retentionPeriod: Duration.days(14) });
    NagSuppressions.addResourceSuppressions(queue, [
      { id: "AwsSolutions-SQS3", reason: "This queue is itself a dead-letter queue" },
      { id: "Serverless-SQSRedrivePolicy", reason: "This queue is itself a dead-letter queue" },
    ]);
    return queue;
  };
  const deadLetters = deadLetterQueue("DeadLetterQueue");
  const targetsDeadLetters = deadLetterQueue("TargetsDeadLetterQueue");
  const autoActionDeadLetters = deadLetterQueue("AutoActionDeadLetterQueue");
  const redrive = (queue: sqs.IQueue, maxReceiveCount: number = MAX_RECEIVE_COUNT) => ({
    deadLetterQueue: { queue, maxReceiveCount },
  });
  // The decide function's queues: it dead-letters failing items itself; SQS's limit is a backstop.
  const decideQueue = {
    visibilityTimeout: Duration.seconds(INTAKE_VISIBILITY_SECONDS),
    retentionPeriod: Duration.days(DECIDE_QUEUES.retentionDays),
    ...redrive(deadLetters, DECIDE_QUEUES.maxReceiveCount),
  };
  return {
    deadLetters,
    targetsDeadLetters,
    autoActionDeadLetters,
    intake: secureQueue("IntakeQueue", decideQueue),
    // Same dead-letter queue as the intake: a replay brings batch items back through the intake.
    batch: secureQueue("BatchQueue", decideQueue),
    // The targets' queues: durable, retried, dead-lettered after the receive limit.
    review: secureQueue("ReviewQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      ...redrive(targetsDeadLetters),
    }),
    autoAction: secureQueue("AutoActionQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      ...redrive(autoActionDeadLetters),
    }),
    rejected: secureQueue("RejectedQueue", {
      retentionPeriod: Duration.days(14),
      ...redrive(targetsDeadLetters),
    }),
  };
}
