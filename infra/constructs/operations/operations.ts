/**
 * Operations: the alarms, sent to an encrypted SNS topic (`alarm-topic.ts`), and a dashboard
 * (`pipeline-dashboard.ts`). Alarms notify by severity. Critical ones notify on their own: the
 * endpoint failing (the decide function's endpoint failures; a fleet refusing nearly every call),
 * the intake not draining (its oldest item, items in flight), table throttling and dead letters
 * arriving (each says how to replay); so do those that each ask for their own action: rejected
 * items waiting, the escalation rate, events refused because they do not match their decision
 * record, and each policy's review service level. Warnings (the endpoint's latency, a new fleet
 * slower or silent during its bake, and those of `health-alarms.ts`) notify through the one
 * composite "pipeline unhealthy" alarm and, each transition once, through the state-change rule.
 */
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as kms from "aws-cdk-lib/aws-kms";
import type * as sns from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import type { DeadLetterSource } from "../../../shared/domain/dead-letters.ts";
import { ENDPOINT_DEADLINE_MS, METRICS, ON_CALL_ALARMS } from "../../../shared/domain/topology.ts";
import { followerStaleAlarm } from "../capacity-follower.ts";
import type { DecisionPipeline } from "../decision-pipeline.ts";
import { AlarmTopic } from "./alarm-topic.ts";
import { type DeadLetterAlarms, deadLetterAlarmsOf } from "./dead-letter-alarms.ts";
import { type EndpointHealth, HealthAlarms } from "./health-alarms.ts";
import { PipelineDashboard } from "./pipeline-dashboard.ts";
import {
  backlogMetric,
  endpointMetric,
  escalationRate,
  eventMismatches,
  oldestItemAge,
  pipelineMetric,
} from "./pipeline-metrics.ts";
import { type ThresholdAlarmSpec, thresholdAlarm } from "./threshold-alarm.ts";

/** Properties of {@link Operations}. */
export interface OperationsProps {
  readonly pipeline: DecisionPipeline;
  /**
   * The real-time or serverless endpoint, its variant and how it is provisioned; none when the
   * live lane runs on the async endpoint (whose alarms are `async-alarms.ts`).
   */
  readonly endpoint?: EndpointHealth | undefined;
  /** Where alarms are emailed. @default no subscription (subscribe to the topic yourself) */
  readonly alarmEmail?: string;
  /** Age of the oldest intake message that raises the alarm. @default ON_CALL_ALARMS.oldestMessageMinutes.intake */
  readonly maxMessageAge?: Duration;
  /** Share of decisions escalated to people that raises the alarm. @default 0.5 */
  readonly maxEscalationRate?: number;
  /**
   * p90 model latency (one call, its items in turn) that raises the alarm. @default
   * ON_CALL_ALARMS.modelLatencyShareOfDeadline of the endpoint's deadline (a full call of fresh
   * items takes about 15 s, so a fixed 10 s kept this alarm in ALARM under normal load)
   */
  readonly maxModelLatency?: Duration;
  /**
   * Review service level per policy id: minutes the oldest pending item may wait (the policy's
   * `reviewWithinMinutes`, else the default). One alarm per entry.
   */
  readonly reviewServiceLevels?: Readonly<Record<string, number>>;
}

/** The pipeline's alarms by name. */
export type PipelineAlarms = Record<
  "rejectedItems" | "oldestMessage" | "escalationRate" | "forgedEvents",
  cloudwatch.Alarm
> &
  // The decide function's endpoint failures and the endpoint's latency: none without a real-time
  // or serverless endpoint (the async lane's failed invocations have their own alarm).
  Partial<Record<"endpointErrors" | "modelLatency", cloudwatch.Alarm>>;

const fiveMinuteMaximum = { period: Duration.minutes(5), statistic: "Maximum" } as const;

/** Alarms and dashboard for the pipeline and its endpoint. */
export class Operations extends Construct {
  public readonly topic: sns.Topic;
  public readonly alarms: PipelineAlarms;
  /** Each dead-letter queue's depth and arrival alarms. */
  public readonly deadLetterAlarms: Record<DeadLetterSource, DeadLetterAlarms>;
  public readonly dashboard: cloudwatch.Dashboard;
  /** The health signals and the composite alarm over them; `health.add(alarm)` adds a signal. */
  public readonly health: HealthAlarms;
  /** One alarm per policy: its oldest pending review has waited past the policy's limit. */
  public readonly reviewAlarms: Record<string, cloudwatch.Alarm>;
  private readonly alarmTopic: AlarmTopic;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const key = new kms.Key(this, "AlarmsKey", {
      enableKeyRotation: true,
      // Kept when the stack goes (a key's deletion is final), not left behind by a failed first create.
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    this.alarmTopic = new AlarmTopic(this, "Alarms", {
      key,
      ...(props.alarmEmail ? { email: props.alarmEmail } : {}),
    });
    this.topic = this.alarmTopic.topic;
    this.deadLetterAlarms = deadLetterAlarmsOf(this, props.pipeline.deadLetterSources, this.alarmTopic);
    this.health = new HealthAlarms(this, "Health", {
      pipeline: props.pipeline,
      endpoint: props.endpoint,
      topic: this.alarmTopic,
    });
    this.alarms = {
      ...this.queueAlarms(props),
      ...this.endpointAlarms(props),
      // A security signal, not a health one: it notifies on its own.
      forgedEvents: this.alarm("ForgedEvents", {
        metric: eventMismatches(),
        threshold: 0,
        description:
          "A target refused an event that does not match its decision record (a forged or altered Decision Made): see the auto-action and review intake logs, 'event does not match its decision record'",
      }),
    };
    // The new fleet's own alarms (the deployment rolls back on them): refusing is the endpoint
    // failing; slower or silent during a bake are warnings (the rollback is the remedy).
    const guardrail = props.endpoint?.guardrail;
    if (guardrail) {
      this.notify(guardrail.refusing);
      this.health.add(guardrail.slower);
      this.health.add(guardrail.silent);
    }
    // The capacity follower's own heartbeat: scaling would stop without a word if it did.
    if (props.pipeline.functions.capacityFollower) this.health.add(followerStaleAlarm(this));
    const levels = Object.entries(props.reviewServiceLevels ?? {});
    this.reviewAlarms = Object.fromEntries(
      levels.map(([policyId, minutes], i) => [
        policyId,
        this.alarm(`ReviewServiceLevel${i}`, {
          metric: backlogMetric(METRICS.oldestPendingReviewMinutes, policyId),
          threshold: minutes,
          // The backlog function reports every policy every five minutes: two periods without
          // a figure mean it has stopped, and nobody would know that items wait.
          evaluationPeriods: 2,
          missingDataBreaches: true,
          description: `Escalated ${policyId} items have waited more than ${minutes} minutes for a reviewer, or the review backlog function has stopped reporting`,
        }),
      ]),
    );
    this.dashboard = new PipelineDashboard(this, "Dashboard", {
      pipeline: props.pipeline,
      ...(props.endpoint ? { endpoint: props.endpoint } : {}),
      policyIds: levels.map(([policyId]) => policyId),
    }).dashboard;
  }

  /** Sends an alarm's state changes (into ALARM and back to OK) to the alarm topic; returns it. */
  notify<T extends cloudwatch.Alarm | cloudwatch.CompositeAlarm>(alarm: T): T {
    return this.alarmTopic.notify(alarm);
  }

  private alarm(id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm {
    return this.notify(thresholdAlarm(this, id, spec));
  }

  /** A health signal: no actions of its own, it notifies through the composite alarm. */
  private signal(id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm {
    const alarm = thresholdAlarm(this, id, spec);
    this.health.add(alarm);
    return alarm;
  }

  /** The rejected items' inspection queue and the intake's oldest message. */
  private queueAlarms(props: OperationsProps) {
    const { queues } = props.pipeline;
    return {
      rejectedItems: this.alarm("RejectedItems", {
        metric: queues.rejected.metricApproximateAgeOfOldestMessage(fiveMinuteMaximum),
        threshold: Duration.days(1).toSeconds(),
        description: "Rejected items have waited a day for inspection",
      }),
      oldestMessage: this.alarm("OldestMessage", {
        metric: oldestItemAge(queues.intake, "intake", fiveMinuteMaximum.period),
        threshold: (
          props.maxMessageAge ?? Duration.minutes(ON_CALL_ALARMS.oldestMessageMinutes.intake)
        ).toSeconds(),
        description: "Items wait too long for a decision: the endpoint or the decide function is behind",
        evaluationPeriods: ON_CALL_ALARMS.oldestAgeLookbackPeriods,
        datapointsToAlarm: 1,
      }),
    };
  }

  /** The endpoint's errors and latency (with a real-time or serverless endpoint), and the share of decisions escalated to people. */
  private endpointAlarms(props: OperationsProps) {
    const endpoint = props.endpoint;
    const alarms = endpoint
      ? {
          // Not SageMaker's Invocation5XXErrors: that counts the container's deliberate 503 queue_full
          // answers too, so a busy hour would page on-call and roll back a good deployment. The decide
          // function counts the items the endpoint failed for any other reason (a 500, a model error,
          // a timeout, an answer that breaks the contract); no invocations, no failures: not breaching.
          endpointErrors: this.alarm("EndpointErrors", {
            metric: pipelineMetric(
              METRICS.endpointFailures,
              Duration.seconds(ON_CALL_ALARMS.endpointFailures.periodSeconds),
            ),
            threshold: 0,
            description:
              "The decision endpoint fails items (5xx other than its busy answers, model errors, timeouts, broken answers): the model or container is broken",
            evaluationPeriods: ON_CALL_ALARMS.endpointFailures.evaluationPeriods,
            datapointsToAlarm: ON_CALL_ALARMS.endpointFailures.datapointsToAlarm,
          }),
          modelLatency: this.signal("ModelLatency", {
            metric: endpointMetric(endpoint, "ModelLatency", "p90"),
            threshold:
              (
                props.maxModelLatency ??
                Duration.millis(ENDPOINT_DEADLINE_MS * ON_CALL_ALARMS.modelLatencyShareOfDeadline)
              ).toMilliseconds() * 1000,
            description: "p90 model latency is high (SageMaker reports microseconds)",
            evaluationPeriods: 3,
          }),
        }
      : {};
    return {
      ...alarms,
      escalationRate: this.alarm("EscalationRate", {
        metric: escalationRate(),
        threshold: props.maxEscalationRate ?? 0.5,
        description: "An unusual share of decisions goes to people: check calibration and the input mix",
        evaluationPeriods: 2,
      }),
    };
  }
}
