/**
 * Where alarms are sent: an SNS topic encrypted with a customer managed key, TLS only, with an
 * optional email subscription. Alarms join it through {@link AlarmTopic.notify}.
 */
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import type * as kms from "aws-cdk-lib/aws-kms";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct } from "constructs";

/** Properties of {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /** The key the topic is encrypted with. */
  readonly key: kms.IKey;
  /** Where alarms are emailed. @default no subscription (subscribe to the topic yourself) */
  readonly email?: string;
}

/** The topic (the construct's default child, so its logical id is the construct's). */
export class AlarmTopic extends Construct {
  public readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, "Default", { masterKey: props.key, enforceSSL: true });
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));
  }

  /** Sends `alarm`'s notifications to the topic; returns it. */
  notify<T extends cloudwatch.Alarm>(alarm: T): T {
    alarm.addAlarmAction(new actions.SnsAction(this.topic));
    return alarm;
  }
}

/** What one threshold alarm watches and says. */
export interface ThresholdAlarmSpec {
  readonly metric: cloudwatch.IMetric;
  /** Alarms above this value. */
  readonly threshold: number;
  readonly description: string;
  /** Consecutive periods above the threshold. @default 1 */
  readonly evaluationPeriods?: number;
}

/** An alarm that fires when `metric` is above the threshold (missing data is not breaching). */
export function thresholdAlarm(scope: Construct, id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm {
  return new cloudwatch.Alarm(scope, id, {
    metric: spec.metric,
    threshold: spec.threshold,
    evaluationPeriods: spec.evaluationPeriods ?? 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    alarmDescription: spec.description,
  });
}
