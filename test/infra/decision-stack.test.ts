/**
 * The CDK app, synthesized offline: resources and their key settings, IAM scoping, the event
 * source mapping, alarms, cdk-nag's AwsSolutions checks, and the deployed rules' patterns
 * checked against the sample events with the local bus's own matcher.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import type { DecisionStack } from "../../infra/decision-stack.ts";
import { createTableInput } from "../../shared/adapters/dynamodb/decisions-table.ts";
import { decideConcurrency } from "../../shared/domain/capacity-plan.ts";
import { matchesPattern } from "../../shared/domain/event-pattern.ts";
import { intakeConcurrencyFor } from "../../shared/domain/fleet-reading.ts";
import {
  DECIDE_FUNCTION,
  DECIDE_QUEUES,
  INTAKE_VISIBILITY_SECONDS,
  MAX_RECEIVE_COUNT,
} from "../../shared/domain/topology.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { expectSizingFits, templateSizing } from "../helpers/sizing.ts";
import { type Resource, synthStack } from "../helpers/synth-stack.ts";

let stack: DecisionStack;
let template: Template;

beforeAll(() => {
  stack = synthStack();
  template = Template.fromStack(stack);
}, 120_000);

describe("DecisionStack", () => {
  it("passes cdk-nag's AwsSolutions and Serverless checks with zero unsuppressed errors, every suppression explained", () => {
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("(AwsSolutions|Serverless)-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 120)}`)).toEqual([]);
    const suppressions = Object.values(
      template.toJSON().Resources as Record<
        string,
        { Metadata?: { cdk_nag?: { rules_to_suppress: { reason: string }[] } } }
      >,
    ).flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? []);
    expect(suppressions.length).toBeGreaterThan(0);
    for (const s of suppressions) expect(s.reason.length).toBeGreaterThan(20);
  });

  it("puts every review route behind the Cognito-token authorizer, except the sign-in routes", () => {
    const resources = template.toJSON().Resources as Record<
      string,
      { Type: string; Properties: Record<string, unknown> }
    >;
    const routes = Object.values(resources).filter((r) => r.Type === "AWS::ApiGatewayV2::Route");
    const open = routes
      .filter((r) => (r.Properties.AuthorizationType ?? "NONE") === "NONE")
      .map((r) => r.Properties.RouteKey);
    expect(open.sort()).toEqual([
      "GET /auth/callback",
      "GET /auth/login",
      "GET /auth/logout",
      "GET /auth/refresh",
      "POST /auth/refresh",
    ]);
    const guarded = routes
      .filter((r) => r.Properties.AuthorizationType === "CUSTOM")
      .map((r) => r.Properties.RouteKey);
    expect(guarded.sort()).toEqual(["ANY /", "ANY /{proxy+}", "GET /api/reviews", "POST /api/reviews"]);
    // The sign-in routes' integration is a function with no table access and no other route.
    const signInIntegration = (
      routes.find((r) => r.Properties.RouteKey === "GET /auth/login")!.Properties.Target as {
        "Fn::Join": [string, unknown[]];
      }
    )["Fn::Join"][1][1];
    const sameTarget = routes.filter((r) =>
      JSON.stringify(r.Properties.Target).includes(JSON.stringify(signInIntegration)),
    );
    expect(sameTarget).toHaveLength(5);
    template.hasResourceProperties("AWS::ApiGatewayV2::Authorizer", {
      AuthorizerType: "REQUEST",
      EnableSimpleResponses: true,
      AuthorizerResultTtlInSeconds: 0,
    });
    // No function is reachable any other way: no function URLs.
    expect(Object.values(resources).filter((r) => r.Type === "AWS::Lambda::Url")).toEqual([]);
    template.hasResourceProperties("AWS::Cognito::UserPool", {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      MfaConfiguration: "ON",
    });
    const groups = Object.values(resources)
      .filter((r) => r.Type === "AWS::Cognito::UserPoolGroup")
      .map((r) => r.Properties.GroupName);
    expect(groups.sort()).toEqual(["admins", "reviewers"]);
    template.hasResourceProperties("AWS::Cognito::UserPoolClient", {
      GenerateSecret: false,
      AllowedOAuthFlows: ["code"],
    });
    expect(Object.keys(template.toJSON().Outputs)).toEqual(
      expect.arrayContaining(["ReviewPageUrl", "ReviewSignInUrl", "ReviewUserPoolId"]),
    );
  });

  it("deploys the endpoint on a CPU instance with the model from S3 and scales on the work", () => {
    template.hasResourceProperties("AWS::SageMaker::EndpointConfig", {
      ProductionVariants: [
        Match.objectLike({
          InstanceType: "ml.c6i.xlarge",
          InitialInstanceCount: 1,
          VariantName: "ml-c6i-xlarge",
        }),
      ],
    });
    template.hasResourceProperties("AWS::SageMaker::Model", {
      PrimaryContainer: Match.objectLike({
        ModelDataUrl: { "Fn::Join": ["", ["s3://", { Ref: "ModelBucket" }, "/", { Ref: "ModelKey" }]] },
        Environment: { DECIDE_GPU: "off" },
      }),
    });
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalableTarget", {
      MinCapacity: 1,
      MaxCapacity: 4,
    });
    template.hasResourceProperties("AWS::ApplicationAutoScaling::ScalingPolicy", {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        CustomizedMetricSpecification: Match.objectLike({
          Metrics: Match.arrayWith([
            Match.objectLike({
              MetricStat: Match.objectLike({
                Metric: Match.objectLike({ MetricName: "ConcurrentRequestsPerModel" }),
              }),
            }),
          ]),
        }),
      }),
    });
  });

  it("encrypts every queue, refuses plain HTTP, and dead-letters the intake after the receive limit", () => {
    const queues = template.findResources("AWS::SQS::Queue") as Record<string, Resource>;
    // Intake, batch, review, auto-action and their four dead-letter queues, the rejected items,
    // the job failures, one dead-letter queue per bus rule, the batch files step's queue with
    // its dead-letter queue, and the async lane's notifications with theirs.
    expect(Object.keys(queues)).toHaveLength(18);
    for (const queue of Object.values(queues)) expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    template.resourcePropertiesCountIs(
      "AWS::SQS::QueuePolicy",
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
          ]),
        },
      },
      18,
    );
    // The decide queues: the function dead-letters failing items itself; SQS's limit is the backstop.
    template.hasResourceProperties("AWS::SQS::Queue", {
      VisibilityTimeout: INTAKE_VISIBILITY_SECONDS,
      MessageRetentionPeriod: DECIDE_QUEUES.retentionDays * 86_400,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: DECIDE_QUEUES.maxReceiveCount }),
    });
    template.hasResourceProperties("AWS::SQS::Queue", {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: MAX_RECEIVE_COUNT }),
    });
  });

  it("keeps decisions in an on-demand table with point-in-time recovery and the schema's sparse, sharded indexes", () => {
    template.hasResourceProperties("AWS::DynamoDB::Table", {
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: "expiresAt", Enabled: true },
    });
    const [table] = Object.values(template.findResources("AWS::DynamoDB::Table") as Record<string, Resource>);
    // The same indexes DynamoDB Local is created with: one definition, read by both.
    const local = createTableInput("decisions").GlobalSecondaryIndexes;
    expect(table!.Properties.GlobalSecondaryIndexes).toEqual(local);
    // None keyed on the record's status (a handful of values: a hot partition), none projecting ALL.
    for (const index of local) {
      expect(index.KeySchema.map((k) => k.AttributeName)).not.toContain("status");
      expect(index.Projection.ProjectionType).not.toBe("ALL");
    }
  });

  it("runs the functions on nodejs22.x, arm64, with explicit memory and timeout", () => {
    // Ours, without the CDK's own bucket-notifications and log-retention helpers.
    const functions = Object.entries(
      template.findResources("AWS::Lambda::Function") as Record<string, Resource>,
    )
      .filter(([id]) => !id.startsWith("BucketNotificationsHandler") && !id.startsWith("LogRetention"))
      .map(([, f]) => f);
    // The pipeline's 13, the capacity follower and the endpoint prober, the daily Audit function,
    // and the async lane's submit and result functions.
    expect(functions).toHaveLength(18);
    for (const f of functions) {
      expect(f.Properties.Runtime).toBe("nodejs22.x");
      expect(f.Properties.Architectures).toEqual(["arm64"]);
      expect(f.Properties.MemorySize).toBeGreaterThan(0);
      expect(f.Properties.Timeout).toBeGreaterThan(0);
    }
    template.hasResourceProperties("AWS::Lambda::Function", {
      MemorySize: DECIDE_FUNCTION.memoryMiB,
      Timeout: DECIDE_FUNCTION.timeoutSeconds,
      Environment: {
        Variables: Match.objectLike({
          DECISION_ENDPOINT_NAME: Match.anyValue(),
          POLICIES_DIR: "/var/task/policies",
        }),
      },
    });
  });

  it("feeds the decide function from the intake queue with partial batch failures and bounded concurrency", () => {
    const planned = decideConcurrency({ mode: "realtime", minInstances: 1, maxInstances: 4 });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      BatchSize: planned.batchSize,
      MaximumBatchingWindowInSeconds: DECIDE_FUNCTION.maxBatchingWindowSeconds,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      // What the one instance at the minimum admits; the capacity follower moves it from there.
      ScalingConfig: { MaximumConcurrency: planned.intake },
    });
    expect(planned.intake).toBe(intakeConcurrencyFor(1));
  });

  it("sizes the mappings, the batch size and the endpoint's admission so every admitted item is served in time", () => {
    const sizing = templateSizing(template);
    expectSizingFits(sizing);
    // The pollers start at what the minimum (1 instance) admits, not the maximum (4): the capacity
    // follower raises them with the instances in service.
    expect(sizing.intake.concurrency).toBe(2);
    expect(sizing).toMatchObject({ instances: 1, queueSize: 1 });
  });

  it("lets the decide function return items to their queues and dead-letter them itself", () => {
    const statements = Object.values(template.findResources("AWS::IAM::Policy") as Record<string, Resource>)
      .filter((p) => JSON.stringify(p.Properties.Roles).includes("PipelineDecide"))
      .flatMap(
        (p) =>
          (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
            .Statement,
      );
    const on = (action: string) =>
      statements.filter((s) => [s.Action].flat().includes(action)).map((s) => JSON.stringify(s.Resource));
    // The batch queue is the async lane's (its submit function reads it): the decide function reads the intake.
    expect(on("sqs:ChangeMessageVisibility").join()).toMatch("IntakeQueue");
    expect(on("sqs:ChangeMessageVisibility").join()).not.toMatch("BatchQueue");
    expect(on("sqs:SendMessage").join()).toMatch(/DeadLetterQueue/);
    expect(on("sqs:SendMessage").join()).not.toMatch(/IntakeQueue|BatchQueue/);
  });

  it("gives every queue a consumer, unless it is a dead-letter queue or the rejected items' inspection queue", () => {
    const queues = Object.entries(template.findResources("AWS::SQS::Queue") as Record<string, Resource>);
    const consumed = new Set(
      Object.values(
        template.findResources("AWS::Lambda::EventSourceMapping") as Record<string, Resource>,
      ).map((m) => ((m.Properties.EventSourceArn as { "Fn::GetAtt": string[] })["Fn::GetAtt"] ?? [])[0]),
    );
    const deadLetterTargets = new Set(
      queues.flatMap(([, q]) => {
        const redrive = q.Properties.RedrivePolicy as
          | { deadLetterTargetArn?: { "Fn::GetAtt": string[] } }
          | undefined;
        return redrive?.deadLetterTargetArn ? [redrive.deadLetterTargetArn["Fn::GetAtt"][0]] : [];
      }),
    );
    // A queue nothing consumes is an inspection queue: it must have an alarm on its depth or age.
    const alarmed = new Set(
      Object.values(template.findResources("AWS::CloudWatch::Alarm") as Record<string, Resource>).flatMap(
        (a) =>
          ((a.Properties.Dimensions ?? []) as { Name: string; Value: { "Fn::GetAtt"?: string[] } }[])
            .filter((d) => d.Name === "QueueName")
            .map((d) => d.Value["Fn::GetAtt"]?.[0]),
      ),
    );
    const unwatched = queues.map(([id]) => id).filter((id) => !consumed.has(id) && !alarmed.has(id));
    expect(unwatched).toEqual([]);
    expect(deadLetterTargets.size).toBeGreaterThan(0);
    // The human route's queue in particular: the review intake function consumes it.
    expect([...consumed].some((id) => id?.includes("ReviewQueue"))).toBe(true);
  });

  it("tells the decide function that its one-model endpoint serves no cascade tier (TIER_ENDPOINTS {})", () => {
    // Without it, the sample moderation policy's second tier was asked by name and refused, and
    // every post the first model passed on was rejected (test/unit/cascade.test.ts).
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({ DECISION_ENDPOINT_NAME: Match.anyValue(), TIER_ENDPOINTS: "{}" }),
      },
    });
  });

  it("allows InvokeEndpoint on this one endpoint only", () => {
    const policies = Object.values(template.findResources("AWS::IAM::Policy") as Record<string, Resource>);
    const statements = policies.flatMap(
      (p) =>
        (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
          .Statement,
    );
    // The decide function's, and the endpoint prober's (its known items while a new fleet bakes).
    const invoke = statements.filter((s) => [s.Action].flat().includes("sagemaker:InvokeEndpoint"));
    expect(invoke).toHaveLength(2);
    for (const statement of invoke)
      expect(statement.Resource).toEqual({ Ref: stack.getLogicalId(stack.endpoint!.endpoint) });
    expect(
      statements.every(
        (s) =>
          s.Resource !== "*" ||
          [s.Action].flat().every(
            (a) =>
              a.startsWith("xray:") ||
              a === "ecr:GetAuthorizationToken" ||
              // CDK's LogRetention provider (the endpoints' SageMaker log groups, which SageMaker
              // names and creates): one function for the stack, its retention calls on any group.
              a === "logs:PutRetentionPolicy" ||
              a === "logs:DeleteRetentionPolicy",
          ),
      ),
    ).toBe(true);
  });

  it("routes the sample events exactly as the local bus does, with the deployed patterns", async () => {
    const rules = Object.values(template.findResources("AWS::Events::Rule") as Record<string, Resource>);
    const byDescription = (text: string) =>
      rules.find((r) => String(r.Properties.Description).includes(text))!.Properties.EventPattern as Record<
        string,
        unknown
      >;
    const patterns = {
      auto: byDescription("auto-action"),
      human: byDescription("review queue"),
      rejected: byDescription("inspection"),
      requested: byDescription("Decision Requested"),
    };
    const sample = async (name: string) =>
      JSON.parse(await readFile(join(REPO_ROOT, "events", "eventbridge", `${name}.json`), "utf8"));
    const expected: Record<string, string[]> = {
      "decision-made-auto": ["auto"],
      "decision-made-human": ["human"],
      "decision-rejected": ["rejected"],
      "decision-requested": ["requested"],
      // The pipeline's own notices go to whoever subscribes, never back into a pipeline rule.
      "batch-completed": [],
      "calibration-proposed": [],
    };
    for (const [name, matching] of Object.entries(expected)) {
      const event = await sample(name);
      const matched = Object.entries(patterns)
        .filter(([, pattern]) => matchesPattern(pattern, event))
        .map(([rule]) => rule);
      expect(matched, name).toEqual(matching);
    }
  });
});
