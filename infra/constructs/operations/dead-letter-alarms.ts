/**
 * The dead-letter queues' alarms: two per queue, one while it holds any message (depth), and one
 * each time more arrive (the messages held rose within a minute), so a second failure during an
 * unresolved first notifies again instead of hiding in an alarm that is already on. Both notify on
 * the way back to OK. Each source's alarm says what failed and how its letters go home (the
 * `decide replay` command to run).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { DeadLetterSource } from "../../../shared/domain/dead-letters.ts";
import type { DeadLetterSources } from "../dead-letter-routes.ts";
import type { AlarmTopic } from "./alarm-topic.ts";
import { thresholdAlarm } from "./threshold-alarm.ts";

/** Each dead-letter queue's alarm id and what it tells on-call. */
const DEAD_LETTER_ALARMS: Record<DeadLetterSource, { id: string; description: string }> = {
  intake: {
    id: "DeadLetters",
    description: "Items failed their receives: fix the cause, then npx decide replay --from intake",
  },
  batch: {
    id: "BatchDeadLetters",
    description: "Batch items failed their receives: fix the cause, then npx decide replay --from batch",
  },
  "batch-files": {
    id: "BatchFilesDeadLetters",
    description:
      "A batch's results and errors files could not be written: fix the cause, then npx decide replay --from batch-files",
  },
  review: {
    id: "ReviewDeadLetters",
    description:
      "Escalated items were not queued for review: fix the review intake, then npx decide replay --from review",
  },
  "auto-action": {
    id: "AutoActionDeadLetters",
    description:
      "Confident decisions were not applied: fix the cause, then npx decide replay --from auto-action",
  },
  "auto-rule": {
    id: "AutoRuleDeadLetters",
    description:
      "The bus could not deliver auto decisions: fix the target, then npx decide replay --from auto-rule",
  },
  "human-rule": {
    id: "HumanRuleDeadLetters",
    description:
      "The bus could not deliver escalated decisions to the review queue: fix it, then npx decide replay --from human-rule",
  },
  "rejected-rule": {
    id: "RejectedRuleDeadLetters",
    description:
      "The bus could not deliver rejections: fix the target, then npx decide replay --from rejected-rule",
  },
  "requested-rule": {
    id: "RequestedRuleDeadLetters",
    description:
      "The bus could not deliver upstream requests to the intake: fix it, then npx decide replay --from requested-rule",
  },
  "job-failures": {
    id: "TargetDeadLetters",
    description:
      "A scheduled job or a batch file's intake failed after its retries: npx decide replay --from job-failures --dry-run shows why",
  },
  "async-results": {
    id: "AsyncNotificationDeadLetters",
    description:
      "An async notification could not be settled after its retries (its object's items are undecided): fix the cause, then npx decide replay --from async-results",
  },
};

/** Properties of {@link DeadLetterAlarms}. */
export interface DeadLetterAlarmsProps {
  readonly queue: sqs.IQueue;
  /** What the alarm tells on-call: what failed and how to bring it back. */
  readonly description: string;
  readonly topic: AlarmTopic;
}

/** The depth alarm (the construct's default child, so its logical id is the construct's) and the arrival alarm. */
export class DeadLetterAlarms extends Construct {
  /** Fires while the queue holds a message. */
  public readonly depth: cloudwatch.Alarm;
  /** Fires in each minute in which more messages arrived. */
  public readonly arrived: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: DeadLetterAlarmsProps) {
    super(scope, id);
    const visible = props.queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: "Maximum",
    });
    this.depth = props.topic.notify(
      thresholdAlarm(this, "Default", {
        metric: visible.with({ period: Duration.minutes(5) }),
        threshold: 0,
        description: props.description,
      }),
    );
    // Redriven messages are not counted by NumberOfMessagesSent, so arrivals are read as a rise
    // of the messages held, whatever put them there (a redrive policy, the bus, Lambda). Held
    // counts the hidden ones too: a replay's dry run receives the letters (hiding them) and makes
    // them visible again, which a rise of the visible count alone would take for new arrivals.
    const hidden = props.queue.metricApproximateNumberOfMessagesNotVisible({
      period: Duration.minutes(1),
      statistic: "Maximum",
    });
    this.arrived = props.topic.notify(
      thresholdAlarm(this, "Arrived", {
        metric: new cloudwatch.MathExpression({
          expression: "RATE(visible + hidden)",
          usingMetrics: { visible, hidden },
          label: "dead letters arriving per second",
          period: Duration.minutes(1),
        }),
        threshold: 0,
        description: `New dead letters arrived. ${props.description}`,
      }),
    );
  }
}

/** Two alarms per dead-letter queue (depth and arrivals), each saying how its letters go home. */
export function deadLetterAlarmsOf(
  scope: Construct,
  sources: DeadLetterSources,
  topic: AlarmTopic,
): Record<DeadLetterSource, DeadLetterAlarms> {
  return Object.fromEntries(
    (Object.keys(sources) as DeadLetterSource[]).map((source) => [
      source,
      new DeadLetterAlarms(scope, DEAD_LETTER_ALARMS[source].id, {
        queue: sources[source]!.queue,
        description: DEAD_LETTER_ALARMS[source].description,
        topic,
      }),
    ]),
  ) as Record<DeadLetterSource, DeadLetterAlarms>;
}
