/**
 * Each construct of the stack on its own, synthesized in a bare stack and read back as the
 * template JSON: the table from its schema, the queue consumer's mappings, a rule into a queue
 * with its dead-letter queue, the alarm topic, a dead-letter queue's alarms, the endpoint's scaling, and
 * the aspect that suppresses the functions' cdk-nag findings. Last, the logical ids of the
 * stateful resources, which must never change (a new id replaces a table or a queue).
 */
import { App, Aspects, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as events from "aws-cdk-lib/aws-events";
import * as kms from "aws-cdk-lib/aws-kms";
import * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import * as sqs from "aws-cdk-lib/aws-sqs";
import { describe, expect, it } from "vitest";
import { DecisionsTable } from "../../infra/constructs/decisions-table.ts";
import { EndpointScaling } from "../../infra/constructs/endpoint/endpoint-scaling.ts";
import { AlarmTopic } from "../../infra/constructs/operations/alarm-topic.ts";
import { DeadLetterAlarms } from "../../infra/constructs/operations/dead-letter-alarms.ts";
import { FunctionFindings, functionFactory } from "../../infra/constructs/pipeline-function.ts";
import { QueueConsumer } from "../../infra/constructs/queue-consumer.ts";
import { RuleToQueue } from "../../infra/constructs/rule-to-queue.ts";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/dynamodb/decisions-table.ts";
import { RULES } from "../../shared/domain/topology.ts";
import { type Resource, synthStack } from "../helpers/synth-stack.ts";

/** A bare stack, bundling skipped. */
function bareStack(): Stack {
  return new Stack(new App({ context: { "aws:cdk:bundling-stacks": [] } }), "Bare");
}

const resourcesOf = (stack: Stack, type: string) =>
  Object.entries(Template.fromStack(stack).findResources(type) as Record<string, Resource>);

describe("DecisionsTable", () => {
  it("creates the table with every index its schema lists, on demand, with PITR, TTL, deletion protection and retention", () => {
    const stack = bareStack();
    const decisions = new DecisionsTable(stack, "Decisions");
    const template = Template.fromStack(stack);
    const spec = DECISIONS_TABLE_SCHEMA;
    expect(spec.indexes.length).toBeGreaterThan(0);
    expect(decisions.indexNames).toEqual(spec.indexes.map((index) => index.name));
    template.hasResource("AWS::DynamoDB::Table", {
      DeletionPolicy: "Retain",
      UpdateReplacePolicy: "Retain",
      Properties: Match.objectLike({
        BillingMode: "PAY_PER_REQUEST",
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: spec.ttlAttribute, Enabled: true },
        GlobalSecondaryIndexes: spec.indexes.map((index) => Match.objectLike({ IndexName: index.name })),
      }),
    });
    // The table is the construct's default child: its logical id is that of a table named "Decisions".
    const plain = bareStack();
    new dynamodb.Table(plain, "Decisions", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
    });
    expect(Object.keys(template.findResources("AWS::DynamoDB::Table"))).toEqual(
      resourcesOf(plain, "AWS::DynamoDB::Table").map(([id]) => id),
    );
  });

  it("projects only what an index asks for", () => {
    const stack = bareStack();
    new DecisionsTable(stack, "Decisions", {
      spec: {
        partitionKey: "pk",
        sortKey: "sk",
        ttlAttribute: "expiresAt",
        indexes: [
          { name: "keys", partitionKey: "a", sortKey: "d", include: [] },
          { name: "some", partitionKey: "b", sortKey: "c", include: ["x", "y"] },
        ],
      },
    });
    const [, table] = resourcesOf(stack, "AWS::DynamoDB::Table")[0]!;
    expect(table.Properties.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({ IndexName: "keys", Projection: { ProjectionType: "KEYS_ONLY" } }),
      expect.objectContaining({
        IndexName: "some",
        Projection: { ProjectionType: "INCLUDE", NonKeyAttributes: ["x", "y"] },
      }),
    ]);
  });
});

describe("QueueConsumer", () => {
  it("feeds its function from each queue with partial batch failures, the window and the concurrency asked for", () => {
    const stack = bareStack();
    const table = new dynamodb.Table(stack, "Table", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
    });
    const fn = functionFactory(stack, { table, environment: {} });
    const first = new sqs.Queue(stack, "First");
    const second = new sqs.Queue(stack, "Second");
    const consumer = new QueueConsumer(stack, "Consumer", {
      fn,
      file: "auto-action.ts",
      settings: { memoryMiB: 256, timeoutSeconds: 30, tableAccess: ["GetItem"] },
      sources: [{ queue: first, batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 4 }],
    });
    consumer.addSource({ queue: second, batchSize: 5 });
    const mappings = resourcesOf(stack, "AWS::Lambda::EventSourceMapping").map(([, m]) => m.Properties);
    expect(mappings).toEqual([
      expect.objectContaining({
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 1,
        FunctionResponseTypes: ["ReportBatchItemFailures"],
        ScalingConfig: { MaximumConcurrency: 4 },
      }),
      expect.objectContaining({ BatchSize: 5, FunctionResponseTypes: ["ReportBatchItemFailures"] }),
    ]);
    expect(mappings[1]).not.toHaveProperty("ScalingConfig");
    // The function keeps the logical id it would have as a direct child named "Consumer".
    expect(resourcesOf(stack, "AWS::Lambda::Function").map(([id]) => id)).toEqual([
      expect.stringMatching(/^Consumer[0-9A-F]{8}$/),
    ]);
    expect(resourcesOf(stack, "AWS::Logs::LogGroup").map(([id]) => id)).toEqual([
      expect.stringMatching(/^ConsumerLogs[0-9A-F]{8}$/),
    ]);
  });

  it("refuses a wrapper construct whose id is not the function's name", () => {
    const stack = bareStack();
    const table = new dynamodb.Table(stack, "Table", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
    });
    const fn = functionFactory(stack, { table, environment: {} });
    const settings = { memoryMiB: 256, timeoutSeconds: 30, tableAccess: [] };
    expect(() => fn("Other", "auto-action.ts", settings, new sqs.Queue(stack, "Wrapper"))).toThrow(
      /must be "Other"/,
    );
  });
});

describe("RuleToQueue", () => {
  it("sends the topology's pattern to the queue, with retries, an age limit and the dead-letter queue", () => {
    const stack = bareStack();
    const bus = new events.EventBus(stack, "Bus");
    const queue = new sqs.Queue(stack, "Queue");
    new RuleToQueue(stack, "HumanRule", { bus, rule: "human", queue });
    const [[id, rule]] = resourcesOf(stack, "AWS::Events::Rule") as [[string, Resource]];
    const plain = bareStack();
    new events.Rule(plain, "HumanRule", { eventPattern: { source: ["x"] } });
    expect(id).toBe(resourcesOf(plain, "AWS::Events::Rule")[0]![0]);
    expect(rule.Properties.EventPattern).toEqual(RULES.human.pattern);
    expect(rule.Properties.Targets).toEqual([
      expect.objectContaining({
        Arn: { "Fn::GetAtt": [expect.stringMatching(/^Queue/), "Arn"] },
        RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86_400 },
        DeadLetterConfig: { Arn: { "Fn::GetAtt": [expect.stringMatching(/^HumanRuleDeadLetters/), "Arn"] } },
      }),
    ]);
    // The bus may send to the queue and to its dead-letter queue, from this rule only.
    const policies = resourcesOf(stack, "AWS::SQS::QueuePolicy").map(([, p]) => JSON.stringify(p.Properties));
    expect(policies).toHaveLength(2);
    for (const policy of policies) {
      expect(policy).toContain('"Service":"events.amazonaws.com"');
      expect(policy).toMatch(/"aws:SourceArn":\{"Fn::GetAtt":\["HumanRule/);
    }
  });
});

describe("AlarmTopic and DeadLetterAlarms", () => {
  it("encrypts the topic with the key given, subscribes the email and sends a dead-letter queue's alarm to it", () => {
    const stack = bareStack();
    const key = new kms.Key(stack, "Key");
    const topic = new AlarmTopic(stack, "Alarms", { key, email: "ops@example.com" });
    const queue = new sqs.Queue(stack, "DeadLetters");
    new DeadLetterAlarms(stack, "QueueAlarms", { queue, description: "replay it", topic });
    const template = Template.fromStack(stack);
    const keyId = stack.getLogicalId(key.node.defaultChild as kms.CfnKey);
    template.hasResourceProperties("AWS::SNS::Topic", { KmsMasterKeyId: { "Fn::GetAtt": [keyId, "Arn"] } });
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    const [[id, alarm]] = resourcesOf(stack, "AWS::CloudWatch::Alarm") as [[string, Resource]];
    expect(id).toMatch(/^QueueAlarms/);
    expect(alarm.Properties).toMatchObject({
      MetricName: "ApproximateNumberOfMessagesVisible",
      Threshold: 0,
      AlarmDescription: "replay it",
      AlarmName: "Bare-QueueAlarms",
      AlarmActions: [{ Ref: expect.stringMatching(/^Alarms/) }],
      OKActions: [{ Ref: expect.stringMatching(/^Alarms/) }],
    });
    // CloudWatch may publish to the topic and use its key, for this stack's alarms only.
    const grants = JSON.stringify(template.toJSON().Resources);
    expect(grants.match(/"Service":"cloudwatch\.amazonaws\.com"/g)).toHaveLength(2);
    expect(grants.match(/:alarm:Bare-\*/g)).toHaveLength(2);
  });
});

describe("FunctionFindings", () => {
  it("suppresses the pipeline functions' findings on the function and on children added after it", () => {
    const stack = bareStack();
    const table = new dynamodb.Table(stack, "Table", {
      partitionKey: { name: "pk", type: dynamodb.AttributeType.STRING },
    });
    const fn = functionFactory(stack, { table, environment: {} });
    const created = fn("Job", "drift.ts", { memoryMiB: 256, timeoutSeconds: 30, tableAccess: [] });
    created.configureAsyncInvoke({ retryAttempts: 0 });
    Aspects.of(stack).add(new FunctionFindings());
    const suppressed = (type: string) =>
      resourcesOf(stack, type).flatMap(([, r]) =>
        (
          (r as { Metadata?: { cdk_nag?: { rules_to_suppress: { id: string }[] } } }).Metadata?.cdk_nag
            ?.rules_to_suppress ?? []
        ).map((s) => s.id),
      );
    expect(suppressed("AWS::Lambda::Function")).toEqual(expect.arrayContaining(["AwsSolutions-L1"]));
    expect(suppressed("AWS::Lambda::EventInvokeConfig")).toEqual(
      expect.arrayContaining(["Serverless-LambdaDLQ"]),
    );
    expect(suppressed("AWS::DynamoDB::Table")).toEqual([]);
  });
});

describe("EndpointScaling", () => {
  it("registers the variant between its minimum and maximum, adds on work and backlog, removes with a guard", () => {
    const stack = bareStack();
    const endpoint = new sagemaker.CfnEndpoint(stack, "Endpoint", { endpointConfigName: "config" });
    new EndpointScaling(stack, "Scaling", {
      endpoint,
      endpointName: "decisions-ml-c6i-xlarge",
      variantName: "ml-c6i-xlarge",
      minCapacity: 2,
      maxCapacity: 5,
      concurrentRequestsTarget: 0.4,
    });
    const template = Template.fromStack(stack);
    const [[, target]] = resourcesOf(stack, "AWS::ApplicationAutoScaling::ScalableTarget") as [
      [string, Resource],
    ];
    expect(target.Properties).toMatchObject({
      ResourceId: "endpoint/decisions-ml-c6i-xlarge/variant/ml-c6i-xlarge",
      ScalableDimension: "sagemaker:variant:DesiredInstanceCount",
      MinCapacity: 2,
      MaxCapacity: 5,
    });
    expect((target as { DependsOn?: string[] }).DependsOn).toEqual(["Endpoint"]);
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalingPolicy", {
      PolicyType: "TargetTrackingScaling",
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 0.4, DisableScaleIn: true }),
    });
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalingPolicy", {
      PolicyType: "StepScaling",
      StepScalingPolicyConfiguration: Match.objectLike({ AdjustmentType: "PercentChangeInCapacity" }),
    });
    // The guard's threshold: 90% of the target.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { Threshold: 0.36 });
  });
});

describe("the stateful resources keep their logical ids", () => {
  it("names the table, queues, bucket, bus, topic, key and user pool as the deployed stack does", () => {
    const resources = Template.fromStack(synthStack()).toJSON().Resources as Record<string, { Type: string }>;
    const stateful = [
      "PipelineDecisions34384BF9",
      "PipelineDeadLetterQueueF08023D6",
      "PipelineTargetsDeadLetterQueue449DECC7",
      "PipelineAutoActionDeadLetterQueue4765EFD7",
      "PipelineBatchDeadLetterQueue071C2CA2",
      "PipelineReviewDeadLetterQueueE282FFDF",
      "PipelineAutoRuleDeadLettersB4C3498C",
      "PipelineHumanRuleDeadLettersA09F1139",
      "PipelineRejectedRuleDeadLettersFAD79F6B",
      "PipelineRequestedRuleDeadLetters8B2BB300",
      "PipelineIntakeQueue9ED8428F",
      "PipelineBatchQueue07B93AF7",
      "PipelineReviewQueueA5C9AE79",
      "PipelineAutoActionQueueA693D52B",
      "PipelineRejectedQueueE37C5099",
      "PipelineBus955C15C7",
      "PipelineFilesBucketF6E2FF67",
      "PipelineFilesAccessLogs90E48BF2",
      "PipelineReviewAccessReviewers20C3B78A",
      "OperationsAlarmsKey7E589BEE",
      "OperationsAlarms65F99440",
      "PipelineDecideA0CBFF42",
      "PipelineDecideLogs9FA2DD93",
    ];
    for (const id of stateful) expect(resources[id], id).toBeDefined();
  });
});
