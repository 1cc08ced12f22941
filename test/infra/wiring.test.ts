/**
 * Wiring invariants of the synthesized stack, written so that a change that breaks one fails
 * here: every alarm watches a metric the code emits (captured from the handlers' own EMF output),
 * every asynchronously invoked function has bounded retries and an on-failure destination, every
 * rule target has a dead-letter queue and a retry policy, every function's table permissions are
 * exactly what the topology declares and what its bundle can call, the SageMaker endpoint is
 * isolated and encrypted, and the timeouts nest from the endpoint out to the queue.
 */
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { build } from "esbuild";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DecisionStack } from "../../infra/decision-stack.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { backoffCeilingMs } from "../../shared/domain/backoff/backoff.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import { EndpointUnavailableError } from "../../shared/domain/errors.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import {
  DECIDE_FUNCTION,
  INTAKE_VISIBILITY_SECONDS,
  METRICS,
  TABLE_ACCESS,
  TARGET_FUNCTION,
  TARGET_VISIBILITY_SECONDS,
} from "../../shared/domain/topology.ts";
import { inMemoryDecideDependencies } from "../helpers/decide-dependencies.ts";
import { refuseForgedEvents } from "../helpers/forged-events.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { scheduledEvent } from "../helpers/scheduled-event.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
const BATCH_ARN = "arn:aws:sqs:us-east-1:123456789012:batch";
let resources: Record<string, Resource>;

beforeAll(() => {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const stack = new DecisionStack(app, "Wiring", {
    imageUri: "123456789012.dkr.ecr.us-east-1.amazonaws.com/decide:1",
  });
  resources = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
}, 120_000);

afterEach(() => {
  vi.restoreAllMocks();
});

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const refOf = (value: unknown): string | undefined =>
  (value as { "Fn::GetAtt"?: string[]; Ref?: string })?.["Fn::GetAtt"]?.[0] ??
  (value as { Ref?: string })?.Ref;

/** The logical id of the function CDK created for `name` (e.g. "Decide"). */
function functionId(name: string): string {
  const found = ofType("AWS::Lambda::Function").find(([id]) =>
    new RegExp(`^(Pipeline|Audits)${name}[0-9A-F]{8}$`).test(id),
  );
  if (!found) throw new Error(`no function ${name} in the template`);
  return found[0];
}

describe("alarms watch metrics the code emits", () => {
  it("matches every alarm metric of ours to the decide, review-backlog, audit, follower, prober and async submit handlers' EMF output", async () => {
    process.env.POWERTOOLS_METRICS_DISABLED = "false";
    const lines: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const { createDecideHandler } = await import("../../functions/decide.ts");
    const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
    // Billing far ahead for the first item (auto), even for the second (human); the third fails
    // on the endpoint (a container answering 500: the endpoint-errors alarm's metric).
    const endpoint: DecidesItems = {
      decide: async (item) => {
        if (item.id === "C") throw new EndpointUnavailableError("model error 500 from decide");
        return {
          logits: item.id === "A" ? [9, 0, 0, 0] : [0, 0, 0, 0],
          allowedTokenMass: 0.9,
          modelSha256: "a".repeat(64),
          promptSha256: "b".repeat(64),
          promptVersion: "t@1",
          latencyMs: 1,
        };
      },
    };
    const handler = createDecideHandler(
      async () => inMemoryDecideDependencies(policies, endpoint),
      undefined,
      () => BATCH_ARN,
    );
    // Each record carries its first send time, as SQS's do: the oldest item's age per lane.
    const record = (id: string, sourceArn = "arn:aws:sqs:us-east-1:123456789012:intake") => ({
      messageId: id,
      receiptHandle: id,
      body: JSON.stringify({ id, policy: "ticket-routing", state: "charged twice" }),
      attributes: { SentTimestamp: String(Date.now() - 60_000), ApproximateReceiveCount: "4" } as never,
      messageAttributes: {},
      md5OfBody: "",
      eventSource: "aws:sqs",
      eventSourceARN: sourceArn,
      awsRegion: "us-east-1",
    });
    await handler({ Records: [record("A"), record("B"), record("C")] }, { functionName: "decide" } as never);
    await handler({ Records: [record("D", BATCH_ARN)] }, { functionName: "decide" } as never);
    const { createReviewBacklogHandler } = await import("../../functions/review-backlog.ts");
    const backlog = createReviewBacklogHandler(async () => ({
      policies,
      now: () => new Date(),
      store: new InMemoryDecisionStore(),
      publisher: { publish: async () => undefined },
    }));
    const scheduled = scheduledEvent(new Date().toISOString());
    await backlog(scheduled as never, { functionName: "review-backlog" } as never);
    // The audit estimate of every policy with a labelled audit sample (its budget alarm's metric).
    const { createAuditHandler } = await import("../../functions/audit.ts");
    const audited = new InMemoryDecisionStore();
    for (const policyId of policies.ids())
      await audited.create({
        itemId: `AUDIT-${policyId}`,
        policyId,
        policyVersion: 1,
        status: "reviewed",
        route: "human",
        reason: "audit_sample",
        chosen: policies.current(policyId)!.options[0]!.id,
        label: policies.current(policyId)!.options[0]!.id,
        auditBand: "all",
        auditInclusionProbability: 0.1,
        createdAt: scheduled.time,
        updatedAt: scheduled.time,
        eventPublished: true,
      });
    await createAuditHandler(async () => ({ policies, store: audited }))(
      scheduled as never,
      { functionName: "audit" } as never,
    );
    // The capacity follower's figures (the scale-in guard's instances in service).
    const { createFollowCapacityHandler } = await import("../../functions/follow-capacity.ts");
    await createFollowCapacityHandler(async () => ({
      fleet: { counts: async () => ({ inService: 2, desired: 2, baking: false }) },
      intake: { depth: async () => ({ visible: 10, inFlight: 4 }) },
      mapping: { current: async () => 3, set: async () => undefined },
      readings: { record: async () => undefined },
      secondsPerItem: 1.5,
      now: () => new Date(),
    }))(scheduled as never, { functionName: "capacity-follower" } as never);
    // The async submit function's oldest open object per lane (the lane's open-object alarms).
    const { createAsyncSubmitHandler } = await import("../../functions/async-submit.ts");
    const { InMemoryAsyncObjectStore } = await import(
      "../../shared/adapters/in-memory/in-memory-async-objects.ts"
    );
    const openObjects = new InMemoryAsyncObjectStore();
    for (const source of ["batch", "intake"] as const)
      await openObjects.create({
        objectId: `o-${source}`,
        source,
        policyId: "ticket-routing",
        policyVersion: 1,
        endpointName: "async",
        itemCount: 1,
        attempts: 1,
        inferenceId: `o-${source}-a1`,
        outputLocation: `s3://bucket/async/output/o-${source}-a1.out`,
        state: "submitted",
        submittedAt: new Date(Date.now() - 60_000).toISOString(),
      });
    await createAsyncSubmitHandler(async () => ({ records: openObjects }) as never)(
      { Records: [] } as never,
      { functionName: "async-submit" } as never,
    );
    // The endpoint prober's replies while a new fleet bakes (the silent rollback alarm's metric).
    const { createProbeEndpointHandler } = await import("../../functions/probe-endpoint.ts");
    await createProbeEndpointHandler(async () => ({
      fleet: { counts: async () => ({ inService: 2, desired: 2, baking: true }) },
      endpoint,
      policy: policies.current("ticket-routing")!,
      calls: 1,
      itemIdPrefix: "probe-",
    }))(scheduled as never, { functionName: "endpoint-prober" } as never);
    await refuseForgedEvents(policies);
    vi.restoreAllMocks();
    const emitted = new Set<string>();
    for (const line of lines.join("").split("\n")) {
      if (!line.includes('"CloudWatchMetrics"')) continue;
      const emf = JSON.parse(line) as Record<string, unknown> & {
        _aws: {
          CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
        };
      };
      for (const directive of emf._aws.CloudWatchMetrics) {
        const dimensions = directive.Dimensions.flat()
          .map((name) => `${name}=${String(emf[name])}`)
          .sort()
          .join(",");
        for (const metric of directive.Metrics)
          emitted.add(`${directive.Namespace}|${metric.Name}|${dimensions}`);
      }
    }
    expect([...emitted].some((m) => m.includes("routed_auto"))).toBe(true);
    expect([...emitted].some((m) => m.includes("routed_human"))).toBe(true);
    for (const lane of Object.values(METRICS.lanes))
      expect(emitted).toContain(
        `${METRICS.namespace}|${METRICS.oldestItemAgeSeconds}|${METRICS.laneDimension}=${lane},service=${METRICS.service.decide}`,
      );
    expect(emitted).toContain(
      `${METRICS.namespace}|${METRICS.endpointFailures}|service=${METRICS.service.decide}`,
    );
    for (const service of [METRICS.service.autoAction, METRICS.service.reviewIntake])
      expect(emitted).toContain(`${METRICS.namespace}|${METRICS.eventMismatch}|service=${service}`);
    expect([...emitted].filter((m) => m.includes(METRICS.oldestPendingReviewMinutes))).toHaveLength(
      policies.ids().length,
    );

    const watched = ofType("AWS::CloudWatch::Alarm").flatMap(([, alarm]) => {
      const metrics = (
        alarm.Properties.Metrics as { MetricStat?: { Metric: Record<string, unknown> } }[] | undefined
      )
        ?.map((m) => m.MetricStat?.Metric)
        .filter(Boolean) ?? [alarm.Properties];
      return metrics.map(
        (m) =>
          m as { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] },
      );
    });
    const ours = watched.filter((m) => m.Namespace === METRICS.namespace);
    expect(ours.length).toBeGreaterThan(0);
    for (const metric of ours) {
      const dimensions = (metric.Dimensions ?? [])
        .map((d) => `${d.Name}=${String(d.Value)}`)
        .sort()
        .join(",");
      expect(emitted).toContain(`${metric.Namespace}|${metric.MetricName}|${dimensions}`);
    }
  });
});

describe("every failure has a destination", () => {
  it("gives every rule target a dead-letter queue and a retry policy", () => {
    const targets = ofType("AWS::Events::Rule").flatMap(
      ([, rule]) => (rule.Properties.Targets ?? []) as Record<string, unknown>[],
    );
    expect(targets.length).toBeGreaterThan(4);
    for (const target of targets) {
      expect(target.DeadLetterConfig, JSON.stringify(target.Arn)).toBeDefined();
      expect(target.RetryPolicy, JSON.stringify(target.Arn)).toBeDefined();
    }
  });

  it("invokes functions from rules only where an on-failure destination and bounded retries exist", () => {
    const invokeConfigs = new Map(
      ofType("AWS::Lambda::EventInvokeConfig").map(([, c]) => [
        refOf(c.Properties.FunctionName),
        c.Properties,
      ]),
    );
    const ruleInvoked = ofType("AWS::Events::Rule").flatMap(([, rule]) =>
      ((rule.Properties.Targets ?? []) as { Arn: unknown }[])
        .map((t) => refOf(t.Arn))
        .filter((id): id is string => !!id && resources[id]?.Type === "AWS::Lambda::Function"),
    );
    expect(ruleInvoked.length).toBeGreaterThan(0);
    for (const id of ruleInvoked) {
      const config = invokeConfigs.get(id) as
        | {
            MaximumRetryAttempts: number;
            MaximumEventAgeInSeconds: number;
            DestinationConfig: { OnFailure: unknown };
          }
        | undefined;
      expect(config, `${id} has no EventInvokeConfig`).toBeDefined();
      expect(config!.MaximumRetryAttempts).toBeLessThanOrEqual(2);
      expect(config!.MaximumEventAgeInSeconds).toBeLessThanOrEqual(6 * 3600);
      expect(config!.DestinationConfig.OnFailure).toBeDefined();
    }
  });
});

describe("least privilege on the decisions table", () => {
  const tableActions = (fn: string): string[] => {
    const role = refOf(resources[functionId(fn)]!.Properties.Role);
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => ((p.Properties.Roles ?? []) as unknown[]).some((r) => refOf(r) === role))
      .flatMap(
        ([, p]) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
      );
    return [
      ...new Set(statements.flatMap((s) => [s.Action].flat()).filter((a) => a.startsWith("dynamodb:"))),
    ].sort();
  };
  const files: Record<keyof typeof TABLE_ACCESS, string> = {
    Decide: "decide.ts",
    AutoAction: "auto-action.ts",
    ReviewIntake: "review-intake.ts",
    Review: "review.ts",
    ReviewPage: "review-page.ts",
    Replay: "replay.ts",
    Drift: "drift.ts",
    ReviewBacklog: "review-backlog.ts",
    Recalibrate: "recalibrate.ts",
    Audit: "audit.ts",
    BatchIntake: "batch-intake.ts",
    BatchFiles: "batch-files.ts",
    CapacityFollower: "follow-capacity.ts",
    AsyncSubmit: "async-submit.ts",
    AsyncResults: "async-results.ts",
  };
  const commandActions: Record<string, string> = {
    GetCommand: "GetItem",
    PutCommand: "PutItem",
    UpdateCommand: "UpdateItem",
    QueryCommand: "Query",
    DeleteCommand: "DeleteItem",
    ScanCommand: "Scan",
    BatchWriteCommand: "BatchWriteItem",
    BatchGetCommand: "BatchGetItem",
    TransactWriteCommand: "TransactWriteItems",
  };

  it.each(Object.entries(files))(
    "grants %s exactly the declared actions, each one its bundle can call",
    async (name, file) => {
      const declared = [...TABLE_ACCESS[name as keyof typeof TABLE_ACCESS]]
        .map((a) => `dynamodb:${a}`)
        .sort();
      expect(tableActions(name)).toEqual(declared);
      // The SDK stays external in the bundle, so its imports list exactly the commands the code uses.
      const bundle = await build({
        entryPoints: [join(REPO_ROOT, "functions", file)],
        bundle: true,
        write: false,
        format: "esm",
        platform: "node",
        external: ["@aws-sdk/*", "node-llama-cpp"],
        logLevel: "silent",
      });
      const text = bundle.outputFiles[0]!.text;
      const imported = [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*"@aws-sdk\/lib-dynamodb"/g)].flatMap(
        (m) => m[1]!.split(",").map((s) => s.trim().split(/\s+as\s+/)[0]!),
      );
      const callable = new Set(
        imported
          .map((c) => commandActions[c])
          .filter(Boolean)
          .map((a) => `dynamodb:${a}`),
      );
      for (const action of declared)
        expect(callable, `${name} is granted ${action} its code cannot call`).toContain(action);
    },
    60_000,
  );
});

describe("the endpoint is isolated and encrypted", () => {
  it("runs the model with network isolation, encrypts its storage and pulls from one repository", () => {
    for (const [, model] of ofType("AWS::SageMaker::Model"))
      expect(model.Properties.EnableNetworkIsolation).toBe(true);
    for (const [, config] of ofType("AWS::SageMaker::EndpointConfig"))
      expect(config.Properties.KmsKeyId).toBeDefined();
    const ecrResources = ofType("AWS::IAM::Policy").flatMap(([, p]) =>
      (
        p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }
      ).Statement.filter((s) => [s.Action].flat().includes("ecr:BatchGetImage")).map((s) =>
        JSON.stringify(s.Resource),
      ),
    );
    // The real-time and the async endpoint run the same image.
    expect([...new Set(ecrResources)]).toEqual([
      JSON.stringify("arn:aws:ecr:us-east-1:123456789012:repository/decide"),
    ]);
  });
});

describe("timeouts nest from the endpoint out to the queue", () => {
  it("keeps client tries under the function timeout, the function under the visibility timeout, the lease under it", () => {
    const clientWorstMs =
      DECIDE_FUNCTION.endpointAttempts * DECIDE_FUNCTION.endpointTimeoutMs +
      backoffCeilingMs(DECIDE_FUNCTION.endpointAttempts, 100);
    expect(clientWorstMs).toBeLessThan(DECIDE_FUNCTION.timeoutSeconds * 1000);
    // The server gives up before its client does, so it never evaluates an abandoned request.
    const model = ofType("AWS::SageMaker::Model")[0]![1].Properties as {
      PrimaryContainer: { Environment: Record<string, string> };
    };
    expect(Number(model.PrimaryContainer.Environment.DECIDE_DEADLINE_MS)).toBeLessThan(
      DECIDE_FUNCTION.endpointTimeoutMs,
    );
    expect(DECIDE_FUNCTION.timeoutSeconds).toBeLessThan(INTAKE_VISIBILITY_SECONDS);
    expect(DECIDE_FUNCTION.publishLeaseMs).toBeLessThan(INTAKE_VISIBILITY_SECONDS * 1000);
    expect(TARGET_FUNCTION.timeoutSeconds).toBeLessThan(TARGET_VISIBILITY_SECONDS);
    // And the template says the same.
    const decide = resources[functionId("Decide")]!.Properties;
    expect(decide.Timeout).toBe(DECIDE_FUNCTION.timeoutSeconds);
    const intake = ofType("AWS::SQS::Queue").find(([id]) => id.includes("IntakeQueue"))![1];
    expect(intake.Properties.VisibilityTimeout).toBe(INTAKE_VISIBILITY_SECONDS);
  });
});
