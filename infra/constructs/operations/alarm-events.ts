/**
 * Every state change of the warning alarms goes out once, by itself: CloudWatch sends each
 * alarm's transition to EventBridge ("CloudWatch Alarm State Change"), and this rule forwards
 * those of the alarms named with the warnings' prefix to the alarm topic, one message per
 * transition. The composite alarm over the warnings notifies only on its own transitions, so
 * while one noisy warning holds it in ALARM a second warning would otherwise say nothing. The
 * rule publishes as a role of its own (EventBridge assumes it), allowed to publish to the topic
 * and use its key, so neither the topic nor the key lets the events service in by name.
 */
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import type { AlarmTopic } from "./alarm-topic.ts";

/** Properties of {@link AlarmEvents}. */
export interface AlarmEventsProps {
  readonly topic: AlarmTopic;
  /** The warnings' alarm name prefix (`warningNamePrefix`). */
  readonly alarmNamePrefix: string;
  /** Where an event the topic did not take lands. */
  readonly deadLetters: sqs.IQueue;
}

/** The rule (the construct's default child). */
export class AlarmEvents extends Construct {
  public readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: AlarmEventsProps) {
    super(scope, id);
    const detail = (path: string) => events.EventField.fromPath(`$.detail.${path}`);
    this.rule = new events.Rule(this, "Default", {
      description: "Each warning alarm's state change, once, to the alarm topic",
      eventPattern: {
        source: ["aws.cloudwatch"],
        detailType: ["CloudWatch Alarm State Change"],
        detail: { alarmName: events.Match.prefix(props.alarmNamePrefix) },
      },
      targets: [
        new targets.SnsTopic(props.topic.topic, {
          authorizeUsingRole: true,
          message: events.RuleTargetInput.fromText(
            `${detail("alarmName")} is ${detail("state.value")} (was ${detail("previousState.value")}): ${detail("state.reason")}`,
          ),
          deadLetterQueue: props.deadLetters,
          retryAttempts: 8,
        }),
      ],
    });
    // SNS's key grant: the one key of the topic, but KMS's data-key actions are a family.
    NagSuppressions.addResourceSuppressions(
      this.rule.node.findChild("EventsRole"),
      [
        {
          id: "AwsSolutions-IAM5",
          reason: "Publishing to the KMS-encrypted alarm topic: GenerateDataKey* on that topic's one key",
          appliesTo: ["Action::kms:GenerateDataKey*"],
        },
      ],
      true,
    );
  }
}
