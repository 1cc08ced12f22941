/**
 * Every dead-letter queue of the pipeline and where its letters go home: the queue a replay sends
 * them back to, or the rule target a rule's letters are delivered to as the rule would
 * (`shared/domain/dead-letters.ts`).
 */
import type { RuleName } from "../../shared/domain/topology.ts";
import type { AsyncNotificationQueues } from "./async/async-notifications.ts";
import type { BatchJobs } from "./batch-jobs.ts";
import type { DeadLetterHome, DeadLetterSources } from "./dead-letter-routes.ts";
import type { PipelineQueues } from "./pipeline-queues.ts";
import type { RuleToQueue } from "./rule-to-queue.ts";

/** The pipeline's parts the sources are read from. */
export interface DeadLetterParts {
  readonly queues: PipelineQueues;
  readonly rules: Record<RuleName, RuleToQueue>;
  /** The async lane's notifications (batch lane "async" only). */
  readonly asyncNotifications: AsyncNotificationQueues | undefined;
}

/** The pipeline's dead-letter sources, by name. */
export function deadLetterSourcesOf(
  { queues: q, rules, asyncNotifications }: DeadLetterParts,
  batchJobs: BatchJobs,
): DeadLetterSources {
  const rule = (name: RuleName): DeadLetterHome => ({
    queue: rules[name].deadLetters,
    ruleTarget: { queue: rules[name].target, deliver: rules[name].deliver },
  });
  return {
    intake: { queue: q.deadLetters, home: q.intake },
    batch: { queue: q.batchDeadLetters, home: q.batch },
    "batch-files": { queue: batchJobs.filesDeadLetterQueue, home: batchJobs.filesQueue },
    review: { queue: q.reviewDeadLetters, home: q.review },
    "auto-action": { queue: q.autoActionDeadLetters, home: q.autoAction },
    "auto-rule": rule("auto"),
    "human-rule": rule("human"),
    "rejected-rule": rule("rejected"),
    "requested-rule": rule("requested"),
    "job-failures": { queue: q.jobFailures },
    ...(asyncNotifications
      ? { "async-results": { queue: asyncNotifications.deadLetters, home: asyncNotifications.queue } }
      : {}),
  };
}
