/**
 * The async lane's notifications queue and its dead-letter queue, created with the pipeline's
 * queues (in its scope) where the batch lane is async: the endpoint's success and error topics
 * deliver to it (`async-lane.ts`), the result function reads it, and its dead letters are a
 * dead-letter source of their own (`async-results`), sent home by `decide replay` like the others.
 */
import { Duration } from "aws-cdk-lib";
import * as sqs from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { ASYNC_RESULTS_VISIBILITY_SECONDS, MAX_RECEIVE_COUNT } from "../../../shared/domain/topology.ts";
import { createDeadLetterQueue } from "../pipeline-queues.ts";

/** The queue and its dead-letter queue. */
export interface AsyncNotificationQueues {
  readonly queue: sqs.Queue;
  readonly deadLetters: sqs.Queue;
}

/** Creates them in `scope`: encrypted, TLS only, dead-lettered after the receive limit. */
export function asyncNotificationQueues(scope: Construct): AsyncNotificationQueues {
  const deadLetters = createDeadLetterQueue(scope, "AsyncNotificationsDeadLetterQueue");
  const queue = new sqs.Queue(scope, "AsyncNotificationsQueue", {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(ASYNC_RESULTS_VISIBILITY_SECONDS),
    retentionPeriod: Duration.days(14),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: MAX_RECEIVE_COUNT },
  });
  return { queue, deadLetters };
}
