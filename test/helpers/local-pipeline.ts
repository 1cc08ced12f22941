/**
 * The pipeline on real local services for tests: DynamoDB Local, local SQS (intake with a
 * dead-letter queue), the local event bus, the real decision endpoint on the tiny model, and the
 * decide handler fed by a Lambda-style poller. Handler code reaches them only through the
 * AWS_ENDPOINT_URL_* variables, as it would reach AWS.
 */
import { createServer } from "node:net";
import { join } from "node:path";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { SDK_REQUEST_TIMEOUTS } from "../../functions/clients.ts";
import {
  ensureDecisionsTable,
  type LocalDynamoDb,
  startDynamoDbLocal,
} from "../../infra/local/dynamodb-local.ts";
import { type BusEvent, type LocalEventBus, startEventBus } from "../../infra/local/event-bus.ts";
import { type SqsPoller, startSqsPoller } from "../../infra/local/sqs-poller.ts";
import { startTargetQueue } from "../../infra/local/target-queue.ts";
import { DECIDE_FUNCTION, RULES, TARGET_FUNCTION } from "../../infra/topology.ts";
import type { DecideDependencies } from "../../shared/decide/decide-message.ts";
import { startTestEndpoint } from "./endpoint.ts";
import { REPO_ROOT } from "./models.ts";

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A setting given as a value, or as a function read once the endpoint has started (budgets measured on it). */
type Lazy<T> = T | (() => T);
const resolveLazy = <T>(lazy: Lazy<T> | undefined): T | undefined =>
  typeof lazy === "function" ? (lazy as () => T)() : lazy;

/** Options of {@link startLocalPipeline}. */
export interface LocalPipelineOptions {
  readonly maxReceiveCount?: number;
  readonly visibilityTimeoutSeconds?: Lazy<number>;
  readonly failBusEntry?: (entry: Record<string, unknown>) => boolean;
  /** Wraps the dependencies (fault injection). */
  readonly wrap?: (deps: DecideDependencies) => DecideDependencies;
  /** Endpoint URL to use instead of starting the real endpoint (a fault proxy in front of it). */
  readonly endpointUrl?: (real: string) => Promise<string>;
  readonly pollers?: number;
  /** Model file for the endpoint. @default the generated tiny model */
  readonly model?: string;
  /** Per-call endpoint timeout. @default 5000 */
  readonly endpointTimeoutMs?: Lazy<number>;
  /** Endpoint tries per item. @default the topology's */
  readonly endpointAttempts?: Lazy<number>;
  /** The publish lease. @default half the visibility timeout */
  readonly publishLeaseMs?: Lazy<number>;
}

/** The running pipeline. */
export interface LocalPipeline {
  readonly sqs: SQSClient;
  readonly intakeUrl: string;
  readonly dlqUrl: string;
  /** The human route's queue, drained by the review intake function. */
  readonly reviewQueueUrl: string;
  /** The auto route's queue, drained by the auto-action function. */
  readonly autoActionQueueUrl: string;
  readonly bus: LocalEventBus;
  readonly endpoint: RunningServer;
  readonly deps: DecideDependencies;
  readonly routed: { auto: BusEvent[]; human: BusEvent[]; rejected: BusEvent[] };
  /** Effects per item: actions applied by auto-action, review tasks created by the review intake. */
  readonly effects: { actioned: Map<string, number>; queued: Map<string, number> };
  readonly pollers: SqsPoller[];
  /** Approximate messages in a queue (visible plus in flight). */
  depth(queueUrl: string): Promise<number>;
  stop(): Promise<void>;
}

const TABLE = "decisions";

/** Starts everything; call `stop()` in `afterAll`. */
export async function startLocalPipeline(options: LocalPipelineOptions = {}): Promise<LocalPipeline> {
  const endpoint = await startTestEndpoint({
    "queue-size": "256",
    ...(options.model ? { model: options.model } : {}),
  });
  const endpointUrl = options.endpointUrl ? await options.endpointUrl(endpoint.url) : endpoint.url;
  const dynamo: LocalDynamoDb = await startDynamoDbLocal({ port: await freePort() });
  await ensureDecisionsTable(dynamo.endpoint, TABLE);
  const sqsPort = await freePort();
  const sqsServer = await createSqsServer({ port: sqsPort, hostname: "127.0.0.1" });
  const routed: LocalPipeline["routed"] = { auto: [], human: [], rejected: [] };
  const effects: LocalPipeline["effects"] = { actioned: new Map(), queued: new Map() };
  const count = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1);
  const bus = await startEventBus({
    name: "decisions",
    ...(options.failBusEntry ? { failEntry: options.failBusEntry } : {}),
    // The same rules and patterns the CDK app deploys.
    rules: [
      { name: "auto", pattern: RULES.auto.pattern, target: async (e) => void routed.auto.push(e) },
      { name: "human", pattern: RULES.human.pattern, target: async (e) => void routed.human.push(e) },
      {
        name: "rejected",
        pattern: RULES.rejected.pattern,
        target: async (e) => void routed.rejected.push(e),
      },
    ],
  });

  const visibilitySeconds = resolveLazy(options.visibilityTimeoutSeconds) ?? 2;
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${sqsPort}`,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: endpointUrl,
    DECISIONS_TABLE: TABLE,
    EVENT_BUS_NAME: bus.name,
    DECISION_ENDPOINT_NAME: "decision-endpoint",
    POLICIES_DIR: join(REPO_ROOT, "events", "policies"),
    ENDPOINT_TIMEOUT_MS: String(resolveLazy(options.endpointTimeoutMs) ?? 5000),
    ENDPOINT_ATTEMPTS: String(resolveLazy(options.endpointAttempts) ?? DECIDE_FUNCTION.endpointAttempts),
    PUBLISH_LEASE_MS: String(resolveLazy(options.publishLeaseMs) ?? Math.max(200, visibilitySeconds * 500)),
    POWERTOOLS_LOG_LEVEL: "ERROR",
    POWERTOOLS_METRICS_DISABLED: "true",
    POWERTOOLS_DEV: "false",
  });

  const sqs = new SQSClient({ requestHandler: SDK_REQUEST_TIMEOUTS });
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: "intake-dlq" }));
  const intake = await sqs.send(
    new CreateQueueCommand({
      QueueName: "intake",
      Attributes: {
        VisibilityTimeout: String(visibilitySeconds),
        RedrivePolicy: JSON.stringify({
          maxReceiveCount: options.maxReceiveCount ?? 3,
          deadLetterTargetArn: "arn:aws:sqs:us-east-1:123456789012:intake-dlq",
        }),
      },
    }),
  );
  // Imported after the environment is set: the handler's clients read it when first used.
  const { createDecideHandler, dependenciesFromEnv } = await import("../../functions/decide.ts");
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  const base = await dependenciesFromEnv();
  const deps = options.wrap ? options.wrap(base) : base;
  // The targets as deployed: rule → queue → function, each counting the effects it applied.
  const autoQueue = await startTargetQueue({
    sqs,
    bus,
    name: "auto-action",
    pattern: RULES.auto.pattern,
    handler: createAutoActionHandler(
      async () => base,
      (detail, outcome) => outcome === "actioned" && count(effects.actioned, detail.itemId),
    ),
    visibilityTimeoutSeconds: TARGET_FUNCTION.timeoutSeconds,
  });
  const reviewQueue = await startTargetQueue({
    sqs,
    bus,
    name: "review",
    pattern: RULES.human.pattern,
    handler: createReviewIntakeHandler(
      async () => base,
      (detail, outcome) => outcome === "queued" && count(effects.queued, detail.itemId),
    ),
    visibilityTimeoutSeconds: TARGET_FUNCTION.timeoutSeconds,
  });
  // One handler per poller, as Lambda runs one invocation per execution environment at a time
  // (the Powertools batch processor keeps per-invocation state).
  const pollers = Array.from({ length: options.pollers ?? 1 }, () =>
    startSqsPoller({
      sqs,
      queueUrl: intake.QueueUrl!,
      queueArn: "arn:aws:sqs:us-east-1:123456789012:intake",
      handler: createDecideHandler(async () => deps),
      functionName: "decide",
    }),
  );
  const depth = async (queueUrl: string) => {
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    return Number(attributes.Attributes?.ApproximateNumberOfMessages ?? 0);
  };
  return {
    sqs,
    intakeUrl: intake.QueueUrl!,
    dlqUrl: dlq.QueueUrl!,
    reviewQueueUrl: reviewQueue.url,
    autoActionQueueUrl: autoQueue.url,
    bus,
    endpoint,
    deps,
    routed,
    effects,
    pollers,
    depth,
    async stop() {
      await Promise.all([...pollers, reviewQueue.poller, autoQueue.poller].map((poller) => poller.stop()));
      await bus.stop();
      sqsServer.close();
      await dynamo.stop();
      await endpoint.close();
    },
  };
}
