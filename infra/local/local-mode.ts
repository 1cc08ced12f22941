/**
 * The whole pipeline on one machine: the decision endpoint, DynamoDB Local, local SQS queues, the
 * local event bus with the CDK app's rules (from `infra/topology.ts`), and the functions, wired
 * the way the stack deploys them. Handlers reach the stand-ins through AWS_ENDPOINT_URL_*.
 */
import { spawnSync } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { serve } from "@hono/node-server";
import { createSqsServer } from "local-aws-sqs";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { type RunningServer, startServer } from "../../endpoint/server/server.ts";
import { SDK_REQUEST_TIMEOUTS } from "../../functions/clients.ts";
import { type DecisionRecord, RECORD_STATUSES } from "../../shared/decision-record.ts";
import { createReviewApp } from "../../shared/review/review-page.ts";
import {
  DECIDE_FUNCTION,
  MAX_RECEIVE_COUNT,
  RULES,
  TARGET_FUNCTION,
  TARGET_VISIBILITY_SECONDS,
} from "../topology.ts";
import { ensureDecisionsTable, startDynamoDbLocal } from "./dynamodb-local.ts";
import { type LocalEventBus, startEventBus } from "./event-bus.ts";
import type { EventPattern } from "./event-pattern.ts";
import { ensurePortFree, type LocalPorts, resolveLocalPorts } from "./ports.ts";
import { type SqsPoller, startSqsPoller } from "./sqs-poller.ts";
import { startTargetQueue, type TargetQueueOptions } from "./target-queue.ts";

/** Options of {@link startLocalMode}. */
export interface LocalModeOptions {
  /** Folder for the database and the generated model. */
  readonly dataDir: string;
  /** A GGUF model; otherwise a generated one (random weights) is used. */
  readonly model?: string;
  /** Delete the data from earlier runs first. */
  readonly fresh?: boolean;
  /** Ports: 0 picks free ones. @default endpoint 8080, SQS 9324, DynamoDB 8000, bus 9195 */
  /** Ports by service; unset ones take their defaults (`infra/local/ports.ts`). */
  readonly ports?: Partial<LocalPorts>;
  /** Repository root (policies and samples). */
  readonly root: string;
  /** One-line progress messages. */
  readonly say?: (line: string) => void;
}

/** Counts of where items are. */
export interface LocalSummary {
  readonly decided: number;
  readonly auto: number;
  readonly human: number;
  readonly reviewed: number;
  readonly rejected: number;
  readonly deadLetters: number;
  readonly waiting: number;
}

/** A running local pipeline. */
export interface LocalMode {
  readonly endpointUrl: string;
  /** The review page. */
  readonly reviewUrl: string;
  readonly env: Record<string, string>;
  readonly intakeUrl: string;
  readonly dlqUrl: string;
  readonly reviewQueueUrl: string;
  readonly bus: LocalEventBus;
  /** Messages in the review queue (visible and in flight), which the review intake drains. */
  reviewQueueDepth(): Promise<number>;
  /** Records waiting for a reviewer. */
  pendingReview(): Promise<DecisionRecord[]>;
  /** Sends the sample items from events/items/samples.jsonl; returns how many. */
  feedSamples(): Promise<number>;
  summary(): Promise<LocalSummary>;
  stop(): Promise<void>;
}

const TABLE = "decisions";

/**
 * Starts everything; resolves once every part answers. Each service's port is checked free first
 * (only services this call starts are ever used), and a failure part-way stops every part that
 * had started, so nothing is left running.
 */
export async function startLocalMode(options: LocalModeOptions): Promise<LocalMode> {
  const started: (() => Promise<unknown>)[] = [];
  try {
    return await startParts(options, started);
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

async function startParts(
  options: LocalModeOptions,
  started: (() => Promise<unknown>)[],
): Promise<LocalMode> {
  const say = options.say ?? (() => undefined);
  const ports = resolveLocalPorts(undefined, options.ports);
  if (options.fresh) await rm(options.dataDir, { recursive: true, force: true });
  await mkdir(join(options.dataDir, "dynamodb"), { recursive: true });

  let model = options.model;
  if (!model) {
    model = await ensureDemoModel(options.dataDir, defaultDemoInputs(options.root));
    say(
      `model: ${model} (the demo: a computed bag-of-words model for the sample policies, not a language model)`,
    );
  }
  await ensurePortFree("endpoint", ports.endpoint);
  const endpoint: RunningServer = await startServer(
    resolveServerConfig({ model, port: String(ports.endpoint), gpu: "off", "queue-size": "256" }, {}),
    { logger: new Logger({ serviceName: "local-endpoint", logLevel: "ERROR" }) },
  );
  started.push(() => endpoint.close(1_000));
  await endpoint.service.ready;
  if (endpoint.service.state !== "ready")
    throw new Error(`the endpoint could not load ${model}: ${endpoint.service.failureReason}`);
  say(`endpoint: ${endpoint.url} (POST /v1/systemone, /v1/chat/completions)`);

  if (spawnSync("java", ["-version"]).status !== 0) {
    throw new Error(
      "DynamoDB Local needs Java 17, which is not installed here: apt-get install openjdk-17-jre-headless",
    );
  }
  await ensurePortFree("dynamodb", ports.dynamodb);
  const dynamo = await startDynamoDbLocal({ port: ports.dynamodb, path: join(options.dataDir, "dynamodb") });
  started.push(() => dynamo.stop());
  await ensureDecisionsTable(dynamo.endpoint, TABLE);
  say(`DynamoDB Local: ${dynamo.endpoint}, data in ${join(options.dataDir, "dynamodb")}`);
  await ensurePortFree("sqs", ports.sqs);
  const sqsServer = await createSqsServer({ port: ports.sqs, hostname: "127.0.0.1" });
  started.push(async () => sqsServer.close());
  const sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as { port: number }).port}`;

  const env: Record<string, string> = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: endpoint.url,
    DECISIONS_TABLE: TABLE,
    DECISION_ENDPOINT_NAME: "decision-endpoint",
    POLICIES_DIR: join(options.root, "events", "policies"),
    POWERTOOLS_LOG_LEVEL: "ERROR",
    POWERTOOLS_METRICS_DISABLED: "true",
  };
  Object.assign(process.env, env);
  const sqs = new SQSClient({ requestHandler: SDK_REQUEST_TIMEOUTS });
  const queue = async (name: string, attributes: Record<string, string> = {}) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
  const dlqUrl = await queue("intake-dlq");
  const intakeUrl = await queue("intake", {
    // Shorter than the deployed one (six times the function timeout): local batches are small and quick.
    VisibilityTimeout: "30",
    RedrivePolicy: JSON.stringify({
      maxReceiveCount: MAX_RECEIVE_COUNT,
      deadLetterTargetArn: "arn:aws:sqs:us-east-1:123456789012:intake-dlq",
    }),
  });
  await queue("targets-dlq");
  const rejectedUrl = await queue("rejected");

  await ensurePortFree("bus", ports.bus);
  const bus = await startEventBus({ name: "decisions", ...(ports.bus ? { port: ports.bus } : {}) });
  started.push(() => bus.stop());
  env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.endpoint;
  env.EVENT_BUS_NAME = bus.name;
  Object.assign(process.env, env);
  say(`SQS: ${sqsEndpoint}; event bus: ${bus.endpoint}`);

  // The functions, imported once the environment points at the stand-ins.
  const { createDecideHandler, dependenciesFromEnv } = await import("../../functions/decide.ts");
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  const { sharedDependencies } = await import("../../functions/dependencies.ts");
  const deps = await dependenciesFromEnv();
  const toQueue =
    (url: string, body: (e: { detail: unknown }) => unknown) => async (event: { detail: unknown }) => {
      await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(body(event)) }));
    };
  // The targets as deployed: rule → queue (dead letters after the receive limit) → function.
  const targetQueue = (name: string, pattern: EventPattern, handler: TargetQueueOptions["handler"]) =>
    startTargetQueue({
      sqs,
      bus,
      name,
      pattern,
      handler,
      visibilityTimeoutSeconds: TARGET_VISIBILITY_SECONDS,
      batchSize: TARGET_FUNCTION.batchSize,
      redrive: {
        maxReceiveCount: MAX_RECEIVE_COUNT,
        deadLetterArn: "arn:aws:sqs:us-east-1:123456789012:targets-dlq",
      },
    });
  const autoQueue = await targetQueue(
    "auto-action",
    RULES.auto.pattern,
    createAutoActionHandler(async () => deps),
  );
  const reviewQueue = await targetQueue(
    "review",
    RULES.human.pattern,
    createReviewIntakeHandler(async () => deps),
  );
  const reviewQueueUrl = reviewQueue.url;
  Object.assign(env, { INTAKE_QUEUE_URL: intakeUrl, DLQ_URL: dlqUrl, REVIEW_QUEUE_URL: reviewQueueUrl });
  bus.addRule({ name: "rejected", pattern: RULES.rejected.pattern, target: toQueue(rejectedUrl, (e) => e) });
  bus.addRule({
    name: "requested",
    pattern: RULES.requested.pattern,
    target: toQueue(intakeUrl, (e) => e.detail),
  });
  const pollers: SqsPoller[] = [
    startSqsPoller({
      sqs,
      queueUrl: intakeUrl,
      queueArn: "arn:aws:sqs:us-east-1:123456789012:intake",
      handler: createDecideHandler(async () => deps),
      batchSize: DECIDE_FUNCTION.batchSize,
      functionName: "decide",
    }),
    autoQueue.poller,
    reviewQueue.poller,
  ];
  started.push(() => Promise.all(pollers.map((poller) => poller.stop())));
  const shared = await sharedDependencies();
  await ensurePortFree("review", ports.review);
  const reviewServer = serve({
    fetch: createReviewApp(shared).fetch,
    port: ports.review,
    hostname: "127.0.0.1",
  });
  await new Promise<void>((resolve) => reviewServer.once("listening", () => resolve()));
  const reviewUrl = `http://127.0.0.1:${(reviewServer.address() as AddressInfo).port}`;
  say(`review page: ${reviewUrl}`);

  const depth = async (url: string) => {
    const output = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    return Number(output.Attributes?.ApproximateNumberOfMessages ?? 0);
  };
  return {
    endpointUrl: endpoint.url,
    reviewUrl,
    env,
    intakeUrl,
    dlqUrl,
    reviewQueueUrl,
    bus,
    reviewQueueDepth: () => depth(reviewQueueUrl),
    pendingReview: () => shared.store.listByStatus("pending_review", 1000),
    async feedSamples() {
      const lines = (await readFile(join(options.root, "events", "items", "samples.jsonl"), "utf8"))
        .split("\n")
        .filter((l) => l.trim());
      for (let i = 0; i < lines.length; i += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: intakeUrl,
            Entries: lines.slice(i, i + 10).map((body, j) => ({ Id: String(j), MessageBody: body })),
          }),
        );
      }
      return lines.length;
    },
    async summary() {
      const count: Record<string, number> = {};
      for (const status of RECORD_STATUSES)
        count[status] = (await shared.store.listSince(status, "1970-01-01T00:00:00.000Z")).length;
      return {
        decided:
          (count.auto_approved ?? 0) +
          (count.actioned ?? 0) +
          (count.pending_review ?? 0) +
          (count.reviewed ?? 0),
        auto: (count.auto_approved ?? 0) + (count.actioned ?? 0),
        human: count.pending_review ?? 0,
        reviewed: count.reviewed ?? 0,
        rejected: count.rejected ?? 0,
        deadLetters: await depth(dlqUrl),
        waiting: await depth(intakeUrl),
      };
    },
    async stop() {
      await Promise.all(pollers.map((p) => p.stop()));
      await new Promise<void>((resolve) => reviewServer.close(() => resolve()));
      await bus.stop();
      sqsServer.close();
      await dynamo.stop();
      await endpoint.close(5_000);
    },
  };
}
