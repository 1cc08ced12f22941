/**
 * Where alarms are sent: an SNS topic encrypted with a customer managed key, TLS only, with an
 * optional email subscription, that CloudWatch can actually publish to. CloudWatch publishes as
 * the service principal `cloudwatch.amazonaws.com`: it needs `sns:Publish` in the topic policy
 * (the TLS-only policy replaces SNS's default one, which would otherwise have let the account's
 * services in) and `kms:Decrypt` and `kms:GenerateDataKey*` in the key policy (the SNS developer
 * guide, "compatibility between event sources from AWS services and encrypted topics"). Both
 * grants are limited to this account and to alarms whose names start with the stack's name, so
 * no other alarm can use the key or the topic; every alarm joins through
 * {@link AlarmTopic.notify}, which gives it such a name and both alarm and OK actions.
 */
import { Arn, ArnFormat, Stack, Token } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as kms from "aws-cdk-lib/aws-kms";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import { Construct, type IConstruct } from "constructs";

/** Properties of {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /** The key the topic is encrypted with; CloudWatch is allowed to use it for this stack's alarms. */
  readonly key: kms.Key;
  /** Where alarms are emailed. @default no subscription (subscribe to the topic yourself) */
  readonly email?: string;
}

/** The prefix every alarm name of `scope`'s stack starts with. */
export function alarmNamePrefix(scope: IConstruct): string {
  return `${Stack.of(scope).stackName}-`;
}

/** The path of a construct in its stack, for an alarm name (`Default` steps left out). */
function pathInStack(alarm: IConstruct): string {
  const stack = Stack.of(alarm);
  return alarm.node.scopes
    .slice(stack.node.scopes.length)
    .map((scope) => scope.node.id)
    .filter((id) => id !== "Default")
    .join("-");
}

/** A unique alarm name: the stack's name, then the construct's path in the stack. */
export function alarmNameOf(alarm: IConstruct): string {
  return `${alarmNamePrefix(alarm)}${pathInStack(alarm)}`.replace(/[^A-Za-z0-9_.-]/g, "");
}

/** The prefix every warning alarm's name starts with (the state-change rule matches on it). */
export function warningNamePrefix(scope: IConstruct): string {
  return `${alarmNamePrefix(scope)}Warning-`;
}

/** A warning alarm's name: the warnings' prefix, then the construct's path in the stack. */
export function warningNameOf(alarm: IConstruct): string {
  return `${warningNamePrefix(alarm)}${pathInStack(alarm)}`.replace(/[^A-Za-z0-9_.-]/g, "");
}

/** The topic (the construct's default child, so its logical id is the construct's). */
export class AlarmTopic extends Construct {
  public readonly topic: sns.Topic;
  private readonly action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, "Default", { masterKey: props.key, enforceSSL: true });
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));
    this.action = new actions.SnsAction(this.topic);
    const stack = Stack.of(this);
    const fromThisStacksAlarms = {
      StringEquals: { "aws:SourceAccount": stack.account },
      ArnLike: {
        "aws:SourceArn": Arn.format(
          {
            service: "cloudwatch",
            resource: "alarm",
            resourceName: `${alarmNamePrefix(this)}*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          },
          stack,
        ),
      },
    };
    const cloudWatch = new iam.ServicePrincipal("cloudwatch.amazonaws.com");
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "CloudWatchAlarmsPublish",
        principals: [cloudWatch],
        actions: ["sns:Publish"],
        resources: [this.topic.topicArn],
        conditions: fromThisStacksAlarms,
      }),
    );
    props.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: "CloudWatchAlarmsUseKey",
        principals: [cloudWatch],
        actions: ["kms:Decrypt", "kms:GenerateDataKey*"],
        resources: ["*"],
        conditions: fromThisStacksAlarms,
      }),
    );
  }

  /**
   * Sends `alarm`'s state changes to the topic, into ALARM and back to OK (so a second incident
   * after a recovery notifies again); names the alarm after its path when it has no name, so the
   * topic's grants cover it. Returns the alarm.
   */
  notify<T extends cloudwatch.Alarm | cloudwatch.CompositeAlarm>(alarm: T): T {
    const resource = alarm.node.defaultChild as cloudwatch.CfnAlarm | cloudwatch.CfnCompositeAlarm;
    // An alarm created without a name has a placeholder token in its place.
    if (resource.alarmName === undefined || Token.isUnresolved(resource.alarmName))
      resource.alarmName = alarmNameOf(alarm);
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    return alarm;
  }
}
