/**
 * The alarms of one dead-letter queue: it holds messages.
 */
import { Duration } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
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

/** The depth alarm (the construct's default child, so its logical id is the construct's). */
export class DeadLetterAlarms extends Construct {
  /** Fires while the queue holds a message. */
  public readonly depth: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: DeadLetterAlarmsProps) {
    super(scope, id);
    this.depth = props.topic.notify(
      thresholdAlarm(this, "Default", {
        metric: props.queue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: "Maximum",
        }),
        threshold: 0,
        description: props.description,
      }),
    );
  }
}
