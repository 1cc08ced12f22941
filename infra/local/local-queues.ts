/**
 * The local stand-ins of the deployed queues (`infra/constructs/pipeline-queues.ts`): the intake
 * and the batch lane, each dead-lettering into its own queue after the receive limit, the batch
 * files step's queue (`infra/constructs/batch-jobs.ts`) with its own dead-letter queue, the
 * rejected items' inspection queue, the job failures, one dead-letter queue per bus rule, and
 * the dead-letter queues of the targets' queues (which `target-queue.ts` creates). The routes
 * they give (`DEAD_LETTER_ROUTES`) are the ones the stack outputs, so `decide replay --from`
 * works the same against both.
 */
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { DeadLetterRoutes, RuleDelivery } from "../../shared/domain/dead-letters.ts";
import { MAX_RECEIVE_COUNT, type RuleName } from "../../shared/domain/topology.ts";

/** The local SQS's ARN prefix (its account and region). */
export const LOCAL_ARN = "arn:aws:sqs:us-east-1:123456789012";

/** Creates a queue with SQS attributes. */
export type CreatesQueue = (name: string, attributes?: Record<string, string>) => Promise<SqsQueue>;

/** The queues the wiring creates before the targets. */
export interface LocalQueues {
  readonly intake: SqsQueue;
  readonly deadLetters: SqsQueue;
  /** Present when the batch lane runs. */
  readonly batch?: SqsQueue;
  readonly batchDeadLetters?: SqsQueue;
  /** The batch files step's queue and its dead-letter queue, present with the batch lane. */
  readonly batchFiles?: SqsQueue;
  readonly batchFilesDeadLetters?: SqsQueue;
  readonly rejected: SqsQueue;
  readonly jobFailures: SqsQueue;
  /** Each bus rule's undelivered events. */
  readonly ruleDeadLetters: Record<RuleName, SqsQueue>;
}

/** The redrive attributes of a queue that dead-letters into `deadLetterQueue` after `maxReceiveCount`. */
export function redriveTo(deadLetterQueue: string, maxReceiveCount: number): Record<string, string> {
  return {
    RedrivePolicy: JSON.stringify({
      maxReceiveCount,
      deadLetterTargetArn: `${LOCAL_ARN}:${deadLetterQueue}`,
    }),
  };
}

/**
 * Creates the intake, the batch lane and the batch files step's queue (when asked), the
 * inspection queue and the dead-letter queues.
 */
export async function createLocalQueues(
  createQueue: CreatesQueue,
  options: { visibilitySeconds: number; maxReceiveCount: number; batch: boolean },
): Promise<LocalQueues> {
  const visibility = { VisibilityTimeout: String(options.visibilitySeconds) };
  // local-aws-sqs counts a ChangeMessageVisibility as a receive too (SQS does not): every overload
  // return counts twice here, so the local limit is twice the backstop (SQS's maximum at most).
  const receives = Math.min(1000, 2 * options.maxReceiveCount);
  const deadLetters = await createQueue("intake-dlq");
  const intake = await createQueue("intake", {
    ...visibility,
    ...redriveTo("intake-dlq", receives),
  });
  // The batch lane: its own dead-letter queue, so a replay brings its items back to the lane.
  const batchDeadLetters = options.batch ? await createQueue("batch-dlq") : undefined;
  const batch = options.batch
    ? await createQueue("batch", { ...visibility, ...redriveTo("batch-dlq", receives) })
    : undefined;
  // The files step changes no visibility: SQS's own limit applies, as deployed.
  const batchFilesDeadLetters = options.batch ? await createQueue("batch-files-dlq") : undefined;
  const batchFiles = options.batch
    ? await createQueue("batch-files", { ...visibility, ...redriveTo("batch-files-dlq", MAX_RECEIVE_COUNT) })
    : undefined;
  const ruleDeadLetters = {} as Record<RuleName, SqsQueue>;
  for (const rule of ["auto", "human", "rejected", "requested"] as const)
    ruleDeadLetters[rule] = await createQueue(`${rule}-rule-dlq`);
  return {
    intake,
    deadLetters,
    ...(batch && batchDeadLetters ? { batch, batchDeadLetters } : {}),
    ...(batchFiles && batchFilesDeadLetters ? { batchFiles, batchFilesDeadLetters } : {}),
    rejected: await createQueue("rejected"),
    jobFailures: await createQueue("job-failures"),
    ruleDeadLetters,
  };
}

/** The dead-letter routes of the local queues, with the targets' queues (each rule's target too). */
export function localRoutes(
  queues: LocalQueues,
  targets: {
    review: { queue: string; dlq: string };
    autoAction: { queue: string; dlq: string };
    /** The async lane's notifications, where the batch lane is async. */
    asyncResults?: { queue: string; dlq: string };
  },
): DeadLetterRoutes {
  const rule = (name: RuleName, queueUrl: string, deliver: RuleDelivery = "event") => ({
    dlqUrl: queues.ruleDeadLetters[name].url,
    queueUrl,
    deliver,
  });
  const routes: DeadLetterRoutes = {
    intake: { dlqUrl: queues.deadLetters.url, queueUrl: queues.intake.url },
    review: { dlqUrl: targets.review.dlq, queueUrl: targets.review.queue },
    "auto-action": { dlqUrl: targets.autoAction.dlq, queueUrl: targets.autoAction.queue },
    "auto-rule": rule("auto", targets.autoAction.queue),
    "human-rule": rule("human", targets.review.queue),
    "rejected-rule": rule("rejected", queues.rejected.url),
    "requested-rule": rule("requested", queues.intake.url, "detail"),
    "job-failures": { dlqUrl: queues.jobFailures.url },
  };
  if (queues.batch && queues.batchDeadLetters)
    routes.batch = { dlqUrl: queues.batchDeadLetters.url, queueUrl: queues.batch.url };
  if (targets.asyncResults)
    routes["async-results"] = { dlqUrl: targets.asyncResults.dlq, queueUrl: targets.asyncResults.queue };
  if (queues.batchFiles && queues.batchFilesDeadLetters)
    routes["batch-files"] = { dlqUrl: queues.batchFilesDeadLetters.url, queueUrl: queues.batchFiles.url };
  return routes;
}

/**
 * Puts an event the bus could not deliver into a rule's dead-letter queue as EventBridge does:
 * the whole event as the body, the rule and the failure as message attributes.
 */
export function ruleDeadLetter(queue: SqsQueue, rule: string, target: string) {
  return async (event: unknown, error: string): Promise<void> =>
    void (await queue.send(JSON.stringify(event), {
      attributes: {
        RULE_ARN: `arn:aws:events:us-east-1:123456789012:rule/decisions/${rule}`,
        TARGET_ARN: target,
        ERROR_CODE: "LOCAL_DELIVERY_FAILED",
        ERROR_MESSAGE: error,
      },
    }));
}
