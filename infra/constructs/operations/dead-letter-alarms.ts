/**
 * The alarms of one dead-letter queue: one while it holds any message (depth), and one each time
 * more arrive (the messages held rose within a minute), so a second failure during an unresolved
 * first notifies again instead of hiding in an alarm that is already on. Both notify on the way
 * back to OK.
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { AlarmTopic } from "./alarm-topic.ts";
import { thresholdAlarm } from "./threshold-alarm.ts";

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
