/**
 * The event-driven pipeline: intake queue with its dead-letter queue, the decide function on it,
 * the decisions table, the event bus with its rules (auto → auto-action, human → review queue →
 * review intake,
 * rejected → inspection queue, upstream "Decision Requested" → intake), and the review and replay
 * functions, with least-privilege permissions. Settings come from `infra/topology.ts`, shared
 * with the local stand-ins.
 */
import { fileURLToPath } from "node:url";
import { Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as iam from "aws-cdk-lib/aws-iam";
import * as lambda from "aws-cdk-lib/aws-lambda";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import * as logs from "aws-cdk-lib/aws-logs";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { NagSuppressions } from "cdk-nag";
import { Construct } from "constructs";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/decisions-table.ts";
import type { EventPattern } from "../local/event-pattern.ts";
import {
  DECIDE_FUNCTION,
  INTAKE_VISIBILITY_SECONDS,
  MAX_RECEIVE_COUNT,
  METRICS,
  RULES,
  TABLE_ACCESS,
  TARGET_FUNCTION,
  TARGET_VISIBILITY_SECONDS,
} from "../topology.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Properties of {@link DecisionPipeline}. */
export interface DecisionPipelineProps {
  /** Name of the SageMaker endpoint the decide function calls. */
  readonly endpointName: string;
  /** Its ARN: InvokeEndpoint is allowed on this endpoint only. */
  readonly endpointArn: string;
  /** Most endpoint instances; the decide function's concurrency follows. @default 1 */
  readonly endpointMaxInstances?: number;
  /** Where the policy files are bundled from. @default events/policies */
  readonly policiesDir?: string;
}

/** Converts a pattern in EventBridge's JSON form to the CDK's. */
export function toCdkPattern(pattern: EventPattern): events.EventPattern {
  const { "detail-type": detailType, ...rest } = pattern as Record<string, unknown>;
  return { ...rest, ...(detailType ? { detailType } : {}) } as events.EventPattern;
}

/** Everything between the upstream systems and the endpoint's decisions. */
export class DecisionPipeline extends Construct {
  public readonly intakeQueue: sqs.Queue;
  public readonly deadLetterQueue: sqs.Queue;
  public readonly reviewQueue: sqs.Queue;
  /** The auto route's queue, consumed by the auto-action function. */
  public readonly autoActionQueue: sqs.Queue;
  /** Where auto-action messages go after the receive limit; `decide replay` can redrive it. */
  public readonly autoActionDeadLetterQueue: sqs.Queue;
  public readonly rejectedQueue: sqs.Queue;
  public readonly targetsDeadLetterQueue: sqs.Queue;
  public readonly table: dynamodb.Table;
  public readonly bus: events.EventBus;
  public readonly decideFunction: NodejsFunction;
  public readonly autoActionFunction: NodejsFunction;
  public readonly reviewFunction: NodejsFunction;
  public readonly reviewIntakeFunction: NodejsFunction;
  public readonly replayFunction: NodejsFunction;
  public readonly driftFunction: NodejsFunction;
  public readonly reviewUrl: lambda.FunctionUrl;
  public readonly reviewPageFunction: NodejsFunction;
  public readonly reviewPageUrl: lambda.FunctionUrl;
  public readonly rules: Record<keyof typeof RULES, events.Rule>;

  constructor(scope: Construct, id: string, props: DecisionPipelineProps) {
    super(scope, id);
    const secureQueue = (name: string, extra: Partial<sqs.QueueProps> = {}) =>
      new sqs.Queue(this, name, { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true, ...extra });

    this.deadLetterQueue = secureQueue("DeadLetterQueue", { retentionPeriod: Duration.days(14) });
    this.targetsDeadLetterQueue = secureQueue("TargetsDeadLetterQueue", {
      retentionPeriod: Duration.days(14),
    });
    this.autoActionDeadLetterQueue = secureQueue("AutoActionDeadLetterQueue", {
      retentionPeriod: Duration.days(14),
    });
    for (const dlq of [this.deadLetterQueue, this.targetsDeadLetterQueue, this.autoActionDeadLetterQueue]) {
      NagSuppressions.addResourceSuppressions(dlq, [
        { id: "AwsSolutions-SQS3", reason: "This queue is itself a dead-letter queue" },
        { id: "Serverless-SQSRedrivePolicy", reason: "This queue is itself a dead-letter queue" },
      ]);
    }
    this.intakeQueue = secureQueue("IntakeQueue", {
      visibilityTimeout: Duration.seconds(INTAKE_VISIBILITY_SECONDS),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    // The targets' queues: durable, retried, dead-lettered after the receive limit.
    this.reviewQueue = secureQueue("ReviewQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      deadLetterQueue: { queue: this.targetsDeadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    this.autoActionQueue = secureQueue("AutoActionQueue", {
      visibilityTimeout: Duration.seconds(TARGET_VISIBILITY_SECONDS),
      deadLetterQueue: { queue: this.autoActionDeadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    this.rejectedQueue = secureQueue("RejectedQueue", {
      retentionPeriod: Duration.days(14),
      deadLetterQueue: { queue: this.targetsDeadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    const schema = DECISIONS_TABLE_SCHEMA;
    this.table = new dynamodb.Table(this, "Decisions", {
      partitionKey: { name: schema.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: schema.sortKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: schema.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: schema.statusIndex.name,
      partitionKey: { name: schema.statusIndex.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: schema.statusIndex.sortKey, type: dynamodb.AttributeType.STRING },
    });

    this.bus = new events.EventBus(this, "Bus", { eventBusName: `${Stack.of(this).stackName}-decisions` });

    const shared = {
      DECISIONS_TABLE: this.table.tableName,
      EVENT_BUS_NAME: this.bus.eventBusName,
      POLICIES_DIR: "/var/task/policies",
      POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
      POWERTOOLS_LOG_LEVEL: "INFO",
    };
    const policiesDir = props.policiesDir ?? `${ROOT}/events/policies`;
    const fn = (
      name: string,
      file: string,
      settings: {
        memoryMiB: number;
        timeoutSeconds: number;
        environment?: Record<string, string>;
        /** Exactly these actions on the decisions table (`TABLE_ACCESS`). */
        tableAccess: readonly string[];
      },
    ) => {
      const logGroup = new logs.LogGroup(this, `${name}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const created = new NodejsFunction(this, name, {
        entry: `${ROOT}/functions/${file}`,
        handler: "handler",
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        memorySize: settings.memoryMiB,
        timeout: Duration.seconds(settings.timeoutSeconds),
        logGroup,
        tracing: lambda.Tracing.ACTIVE,
        // The tracer's service name: the function's name in the logs' and metrics' style.
        environment: {
          ...shared,
          POWERTOOLS_SERVICE_NAME: name.replace(/[a-z](?=[A-Z])/g, "$&-").toLowerCase(),
          ...settings.environment,
        },
        depsLockFilePath: `${ROOT}/package-lock.json`,
        projectRoot: ROOT,
        bundling: {
          format: OutputFormat.ESM,
          // Findings only: no per-bundle size lines in the synth output.
          logLevel: LogLevel.ERROR,
          target: "node22",
          mainFields: ["module", "main"],
          // Some dependencies still call require(); give the ES module bundle one.
          banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
          externalModules: ["@aws-sdk/*"],
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (_input: string, output: string) => [
              `mkdir -p ${output}/policies`,
              `cp ${policiesDir}/*.json ${output}/policies/`,
            ],
          },
        },
      });
      // Least privilege: the table actions this function's code calls, nothing more.
      this.table.grant(created, ...settings.tableAccess.map((action) => `dynamodb:${action}`));
      return created;
    };
    // A target function fed by a queue, with partial batch failures.
    const queueConsumer = (name: string, file: string, queue: sqs.Queue, tableAccess: readonly string[]) => {
      const created = fn(name, file, {
        memoryMiB: TARGET_FUNCTION.memoryMiB,
        timeoutSeconds: TARGET_FUNCTION.timeoutSeconds,
        tableAccess,
      });
      created.addEventSource(
        new SqsEventSource(queue, { batchSize: TARGET_FUNCTION.batchSize, reportBatchItemFailures: true }),
      );
      return created;
    };

    const concurrency = Math.max(
      2,
      (props.endpointMaxInstances ?? 1) * DECIDE_FUNCTION.concurrencyPerInstance,
    );
    this.decideFunction = fn("Decide", "decide.ts", {
      memoryMiB: DECIDE_FUNCTION.memoryMiB,
      timeoutSeconds: DECIDE_FUNCTION.timeoutSeconds,
      environment: {
        DECISION_ENDPOINT_NAME: props.endpointName,
        ENDPOINT_TIMEOUT_MS: String(DECIDE_FUNCTION.endpointTimeoutMs),
        ENDPOINT_ATTEMPTS: String(DECIDE_FUNCTION.endpointAttempts),
        PUBLISH_LEASE_MS: String(DECIDE_FUNCTION.publishLeaseMs),
      },
      tableAccess: TABLE_ACCESS.Decide,
    });
    this.decideFunction.addEventSource(
      new SqsEventSource(this.intakeQueue, {
        batchSize: DECIDE_FUNCTION.batchSize,
        maxBatchingWindow: Duration.seconds(DECIDE_FUNCTION.maxBatchingWindowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency: concurrency,
      }),
    );
    this.decideFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["sagemaker:InvokeEndpoint"], resources: [props.endpointArn] }),
    );
    this.bus.grantPutEventsTo(this.decideFunction);

    this.autoActionFunction = queueConsumer(
      "AutoAction",
      "auto-action.ts",
      this.autoActionQueue,
      TABLE_ACCESS.AutoAction,
    );
    this.bus.grantPutEventsTo(this.autoActionFunction);

    // The human route's consumer: queues each escalated item for review once per event id.
    this.reviewIntakeFunction = queueConsumer(
      "ReviewIntake",
      "review-intake.ts",
      this.reviewQueue,
      TABLE_ACCESS.ReviewIntake,
    );

    this.reviewFunction = fn("Review", "review.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.Review,
    });
    this.bus.grantPutEventsTo(this.reviewFunction);
    this.reviewUrl = this.reviewFunction.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });

    // The review page; IAM auth: put it behind a signing proxy or your identity provider.
    this.reviewPageFunction = fn("ReviewPage", "review-page.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.ReviewPage,
    });
    this.bus.grantPutEventsTo(this.reviewPageFunction);
    this.reviewPageUrl = this.reviewPageFunction.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.AWS_IAM,
    });

    this.replayFunction = fn("Replay", "replay.ts", {
      memoryMiB: 256,
      timeoutSeconds: 300,
      environment: {
        DLQ_URL: this.deadLetterQueue.queueUrl,
        DLQ_ARN: this.deadLetterQueue.queueArn,
        INTAKE_QUEUE_URL: this.intakeQueue.queueUrl,
      },
      tableAccess: TABLE_ACCESS.Replay,
    });
    this.deadLetterQueue.grantConsumeMessages(this.replayFunction);
    this.intakeQueue.grantSendMessages(this.replayFunction);
    this.replayFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["sqs:StartMessageMoveTask"],
        resources: [this.deadLetterQueue.queueArn],
      }),
    );

    this.driftFunction = fn("Drift", "drift.ts", {
      memoryMiB: 512,
      timeoutSeconds: 300,
      environment: { DRIFT_PERIOD_HOURS: "24" },
      tableAccess: TABLE_ACCESS.Drift,
    });
    // Invoked asynchronously by the schedule: bounded retries, and a failed run lands in a queue
    // (with an alarm on its depth) instead of vanishing.
    this.driftFunction.configureAsyncInvoke({
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: new destinations.SqsDestination(this.targetsDeadLetterQueue),
    });
    this.bus.grantPutEventsTo(this.driftFunction);
    new events.Rule(this, "DriftSchedule", {
      description: "Daily calibration drift check",
      schedule: events.Schedule.rate(Duration.days(1)),
      targets: [
        new targets.LambdaFunction(this.driftFunction, {
          retryAttempts: 2,
          deadLetterQueue: this.targetsDeadLetterQueue,
        }),
      ],
    });

    const rule = (name: keyof typeof RULES, target: events.IRuleTarget) =>
      new events.Rule(this, `${name[0]!.toUpperCase()}${name.slice(1)}Rule`, {
        eventBus: this.bus,
        description: RULES[name].description,
        eventPattern: toCdkPattern(RULES[name].pattern),
        targets: [target],
      });
    const targetOptions = {
      deadLetterQueue: this.targetsDeadLetterQueue,
      retryAttempts: 8,
      maxEventAge: Duration.hours(24),
    };
    this.rules = {
      auto: rule("auto", new targets.SqsQueue(this.autoActionQueue, targetOptions)),
      human: rule("human", new targets.SqsQueue(this.reviewQueue, targetOptions)),
      rejected: rule("rejected", new targets.SqsQueue(this.rejectedQueue, targetOptions)),
      requested: rule(
        "requested",
        new targets.SqsQueue(this.intakeQueue, {
          ...targetOptions,
          message: events.RuleTargetInput.fromEventPath("$.detail"),
        }),
      ),
    };

    for (const f of [
      this.reviewPageFunction,
      this.driftFunction,
      this.decideFunction,
      this.autoActionFunction,
      this.reviewFunction,
      this.reviewIntakeFunction,
      this.replayFunction,
    ]) {
      NagSuppressions.addResourceSuppressions(
        f,
        [
          {
            id: "AwsSolutions-IAM4",
            reason: "AWSLambdaBasicExecutionRole only allows writing this function's logs",
            appliesTo: [
              "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
            ],
          },
          {
            id: "AwsSolutions-IAM5",
            reason:
              "Grants from aws-cdk-lib: the table's indexes (index/*), X-Ray trace segments and SQS/KMS actions scoped to this stack's resources",
          },
          {
            id: "AwsSolutions-L1",
            reason:
              "Pinned to nodejs22.x, the runtime the project tests and supports; newer runtimes are adopted deliberately",
          },
          {
            id: "Serverless-LambdaLatestVersion",
            reason:
              "Pinned to nodejs22.x, the runtime the project tests and supports; newer runtimes are adopted deliberately",
          },
          {
            id: "Serverless-LambdaEventSourceMappingDestination",
            reason:
              "On-failure destinations exist for stream sources only; an SQS event source dead-letters through its queue's redrive policy, which every consumed queue has",
          },
          {
            id: "Serverless-LambdaDLQ",
            reason:
              "A function DLQ only catches asynchronous invocations: the SQS-fed functions dead-letter through their queues' redrive policies, the URL and operator functions are invoked synchronously, and the scheduled drift function has an on-failure destination (which supersedes a DLQ)",
          },
        ],
        true,
      );
    }
  }
}
