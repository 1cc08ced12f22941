/**
 * The signals an on-call engineer needs, by severity. Critical alarms notify on their own, into
 * ALARM and back to OK: DynamoDB throttling (the table's requests, and each secondary index's
 * read and write events) and items piling up in flight on the intake (other constructs add the
 * endpoint failing and the intake's age with {@link HealthAlarms.critical}). Warnings (every
 * function's errors and throttles, the review API's 5xx, the oldest message of the other consumed
 * queues, the endpoint's 4xx, CPU, memory and instances held at the scaling maximum, the decide
 * function's longest run) are alarms without actions of their own: the composite "pipeline
 * unhealthy" alarm is in ALARM while any is, and notifies once for an outage that trips ten,
 * naming them; and every warning's own transition also goes out once through an EventBridge rule
 * (`alarm-events.ts`), so a second warning while the composite is already in ALARM is not silent.
 * Other constructs add warnings with {@link HealthAlarms.add}.
 */
import { Duration, Lazy } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { DECIDE_FUNCTION, ON_CALL_ALARMS, TABLE_ACCESS } from "../../../shared/domain/topology.ts";
import type { DecisionPipeline } from "../decision-pipeline.ts";
import type { GuardrailAlarms } from "../endpoint/deployment-guardrail.ts";
import { vcpusOf } from "../endpoint/instance-types.ts";
import { AlarmEvents } from "./alarm-events.ts";
import { type AlarmTopic, warningNameOf, warningNamePrefix } from "./alarm-topic.ts";
import { type EndpointVariant, endpointMetric, oldestItemAge, sparseSum } from "./pipeline-metrics.ts";
import { type ThresholdAlarmSpec, thresholdAlarm } from "./threshold-alarm.ts";

/** What the health alarms read of the endpoint. */
export interface EndpointHealth extends EndpointVariant {
  readonly mode: "realtime" | "serverless";
  readonly instanceType: string;
  /** The scaling maximum (real-time). */
  readonly maxConcurrency: number;
  /** Seconds a deployment may run the old and new fleets side by side (0 for serverless). */
  readonly deploymentOverlapSeconds: number;
  /** The alarms a deployment rolls back on (real-time). */
  readonly guardrail?: GuardrailAlarms | undefined;
}

/** Properties of {@link HealthAlarms}. */
export interface HealthAlarmsProps {
  readonly pipeline: DecisionPipeline;
  /** The real-time or serverless endpoint; none when the live lane runs on the async endpoint. */
  readonly endpoint?: EndpointHealth | undefined;
  /** Where the composite alarm notifies. */
  readonly topic: AlarmTopic;
}

const fiveMinutes = Duration.minutes(5);
const lowerFirst = (id: string) => id.charAt(0).toLowerCase() + id.slice(1);
const sum = { period: fiveMinutes, statistic: "Sum" } as const;
const maximum = { period: fiveMinutes, statistic: "Maximum" } as const;

/** The DynamoDB operations the functions call, as the `Operation` dimension names them. */
const TABLE_OPERATIONS = [...new Set([...Object.values(TABLE_ACCESS).flat(), "TransactWriteItems"])];

/** The signals (children of this construct) and the composite alarm over them. */
export class HealthAlarms extends Construct {
  /** In ALARM while any signal is. */
  public readonly unhealthy: cloudwatch.CompositeAlarm;
  /** The signals by name (`decideErrors`, `reviewQueueAge`, `tableThrottles`, ...). */
  public readonly signals: Record<string, cloudwatch.Alarm> = {};
  private readonly members: cloudwatch.IAlarm[] = [];
  private readonly topic: AlarmTopic;

  constructor(scope: Construct, id: string, props: HealthAlarmsProps) {
    super(scope, id);
    this.topic = props.topic;
    this.functionSignals(props.pipeline);
    this.queueSignals(props.pipeline);
    this.signal("ReviewApi5xx", {
      metric: props.pipeline.reviewAccess.api.metricServerError(sum),
      threshold: 0,
      description: "The review API answers with 5xx: reviewers may be locked out",
    });
    // CDK's metricThrottledRequestsForOperations adds the operations' counts bare.
    const { table } = props.pipeline;
    const throttled = (operation: string) =>
      table.metric("ThrottledRequests", {
        dimensionsMap: { TableName: table.tableName, Operation: operation },
        ...sum,
      });
    this.critical("TableThrottles", {
      metric: sparseSum(
        Object.fromEntries(
          TABLE_OPERATIONS.map((operation) => [operation.toLowerCase(), throttled(operation)]),
        ),
        { label: "throttled requests", period: fiveMinutes },
      ),
      threshold: 0,
      description: "DynamoDB throttled requests on the decisions table",
    });
    this.indexSignals(props.pipeline);
    if (props.endpoint) this.endpointSignals(props.endpoint);
    const rule: cloudwatch.IAlarmRule = {
      renderAlarmRule: () =>
        Lazy.string({
          produce: () =>
            cloudwatch.AlarmRule.anyOf(
              ...this.members.map((alarm) =>
                cloudwatch.AlarmRule.fromAlarm(alarm, cloudwatch.AlarmState.ALARM),
              ),
            ).renderAlarmRule(),
        }),
    };
    new AlarmEvents(this, "WarningEvents", {
      topic: props.topic,
      alarmNamePrefix: warningNamePrefix(this),
      deadLetters: props.pipeline.queues.jobFailures,
    });
    this.unhealthy = props.topic.notify(
      new cloudwatch.CompositeAlarm(scope, "PipelineUnhealthy", {
        alarmRule: rule,
        alarmDescription:
          "The pipeline is unhealthy: the state reason names the signals in ALARM (each is an alarm of its own, without actions)",
      }),
    );
  }

  /**
   * Adds a warning: named with the warnings' prefix (each of its transitions goes out through the
   * state-change rule), and in the composite alarm. Returns it.
   */
  add<T extends cloudwatch.Alarm>(alarm: T): T {
    (alarm.node.defaultChild as cloudwatch.CfnAlarm).alarmName = warningNameOf(alarm);
    this.members.push(alarm);
    return alarm;
  }

  /** A critical alarm: it notifies on its own, into ALARM and back to OK. Returns it. */
  critical<T extends cloudwatch.Alarm>(alarm: T): T;
  critical(id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm;
  critical(idOrAlarm: string | cloudwatch.Alarm, spec?: ThresholdAlarmSpec): cloudwatch.Alarm {
    const alarm = typeof idOrAlarm === "string" ? thresholdAlarm(this, idOrAlarm, spec!) : idOrAlarm;
    if (typeof idOrAlarm === "string") this.signals[lowerFirst(idOrAlarm)] = alarm;
    return this.topic.notify(alarm);
  }

  private signal(id: string, spec: ThresholdAlarmSpec): cloudwatch.Alarm {
    const alarm = thresholdAlarm(this, id, spec);
    this.signals[lowerFirst(id)] = alarm;
    return this.add(alarm);
  }

  /** Each function's errors and throttles, and the decide function's longest run. */
  private functionSignals(pipeline: DecisionPipeline): void {
    for (const [role, fn] of Object.entries(pipeline.functions)) {
      const name = role.charAt(0).toUpperCase() + role.slice(1);
      this.signal(`${name}Errors`, {
        metric: fn.metricErrors(sum),
        threshold: 0,
        description: `The ${role} function fails`,
      });
      this.signal(`${name}Throttles`, {
        metric: fn.metricThrottles(sum),
        threshold: 0,
        description: `The ${role} function is throttled (the account's or its own concurrency is used up)`,
      });
    }
    const { decide } = pipeline.functions;
    if (!decide) return;
    const limitMs = DECIDE_FUNCTION.timeoutSeconds * 1000;
    this.signal("DecideDuration", {
      metric: decide.metricDuration(maximum),
      threshold: ON_CALL_ALARMS.decideDurationShare * limitMs,
      description: `A decide run took over ${ON_CALL_ALARMS.decideDurationShare * 100}% of its ${DECIDE_FUNCTION.timeoutSeconds} s timeout: the endpoint is slow or the batch too large`,
    });
  }

  /** The oldest message of the batch lane, the batch files step's and the targets' queues (the intake's is the Operations alarm). */
  private queueSignals(pipeline: DecisionPipeline): void {
    const { queues } = pipeline;
    const minutes = ON_CALL_ALARMS.oldestMessageMinutes;
    const age = (id: string, queue: sqs.IQueue, limit: number, what: string, metric?: cloudwatch.IMetric) =>
      this.signal(id, {
        metric: metric ?? queue.metricApproximateAgeOfOldestMessage(maximum),
        threshold: Duration.minutes(limit).toSeconds(),
        description: `${what} have waited over ${limit} minutes: its consumer is behind or failing`,
        // The decide function's age of an item in backoff comes and goes: any recent period holds it.
        ...(metric
          ? { evaluationPeriods: ON_CALL_ALARMS.oldestAgeLookbackPeriods, datapointsToAlarm: 1 }
          : {}),
      });
    // The batch lane's items wait out an overload as the intake's do: the larger of SQS's age and
    // the decide function's (SQS leaves out an item received three times or more).
    const batchAge = oldestItemAge(queues.batch, "batch", fiveMinutes);
    age("BatchQueueAge", queues.batch, minutes.batch, "Batch items", batchAge);
    const files = pipeline.deadLetterSources["batch-files"].home;
    if (files) age("BatchFilesQueueAge", files, minutes.batchFiles, "Requests for a batch's files");
    age("AutoActionQueueAge", queues.autoAction, minutes.autoAction, "Confident decisions to apply");
    age("ReviewQueueAge", queues.review, minutes.review, "Escalated items not yet queued for review");
    // Items an overload backoff hides are in flight: invisible to the visible count, and SQS
    // holds about 120,000 in flight per queue before its receives return nothing.
    this.critical("IntakeInFlight", {
      metric: queues.intake.metricApproximateNumberOfMessagesNotVisible(maximum),
      threshold: ON_CALL_ALARMS.intakeInFlight,
      description: `Over ${ON_CALL_ALARMS.intakeInFlight.toLocaleString("en")} intake items in flight (received or waiting out an overload backoff): the intake is not draining (SQS stops handing out messages at about 120,000 in flight)`,
    });
  }

  /**
   * Each secondary index's throttled reads and writes: the table's metrics leave an index's own
   * events out (they carry the GlobalSecondaryIndexName dimension), and a hot shard of a sparse
   * index throttles there first.
   */
  private indexSignals(pipeline: DecisionPipeline): void {
    const { table } = pipeline;
    for (const indexName of pipeline.tableIndexNames) {
      const events = (metricName: string) =>
        table.metric(metricName, {
          dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
          ...sum,
        });
      this.critical(`${indexName.charAt(0).toUpperCase()}${indexName.slice(1)}IndexThrottles`, {
        metric: sparseSum(
          { reads: events("ReadThrottleEvents"), writes: events("WriteThrottleEvents") },
          { label: `${indexName} throttle events`, period: fiveMinutes },
        ),
        threshold: 0,
        description: `DynamoDB throttles the decisions table's ${indexName} index (reads or writes)`,
      });
    }
  }

  /** The endpoint's refusals, and a real-time endpoint's instances. */
  private endpointSignals(endpoint: EndpointHealth): void {
    if (endpoint.mode === "realtime") this.instanceSignals(endpoint);
    this.signal("Endpoint4xx", {
      metric: endpointMetric(endpoint, "Invocation4XXErrors", "Sum"),
      threshold: 0,
      description: "The endpoint refuses requests (4xx): the decide function and the container disagree",
    });
  }

  /** A real-time endpoint's CPU, memory and instances at the scaling maximum. */
  private instanceSignals(endpoint: EndpointHealth): void {
    const instanceMetric = (metricName: string, statistic: string, period: Duration) =>
      endpointMetric(endpoint, metricName, statistic, { namespace: "/aws/sagemaker/Endpoints", period });
    const sustained = ON_CALL_ALARMS.sustainedMinutes;
    const vcpus = vcpusOf(endpoint.instanceType);
    // SageMaker sums CPUUtilization over the vCPUs (a 4-vCPU instance reads up to 400%).
    if (vcpus)
      this.signal("EndpointCpu", {
        metric: instanceMetric("CPUUtilization", "Average", fiveMinutes),
        threshold: ON_CALL_ALARMS.endpointCpuShare * 100 * vcpus,
        evaluationPeriods: sustained / 5,
        description: `The endpoint's instances have been near full CPU for ${sustained} minutes`,
      });
    this.signal("EndpointMemory", {
      metric: instanceMetric("MemoryUtilization", "Maximum", fiveMinutes),
      threshold: ON_CALL_ALARMS.endpointMemoryPercent,
      description: "An endpoint instance is near the end of its memory",
    });
    // No metric counts the instances; each one reports its CPU once a minute, so the one-minute
    // sample count of CPUUtilization is the number in service. A blue/green deployment runs a new
    // fleet beside the old under the same variant, and the count doubles while it lasts: the
    // alarm needs more minutes at the maximum than a deployment can overlap.
    const minutes = sustained + Math.ceil(endpoint.deploymentOverlapSeconds / 60);
    this.signal("EndpointAtMaximum", {
      metric: instanceMetric("CPUUtilization", "SampleCount", Duration.minutes(1)),
      threshold: endpoint.maxConcurrency,
      atLeast: true,
      evaluationPeriods: minutes + 2,
      datapointsToAlarm: minutes,
      description: `The endpoint has run at its maximum of ${endpoint.maxConcurrency} instances for ${minutes} minutes (longer than a deployment runs two fleets): raise -c maxInstanceCount`,
    });
  }
}
