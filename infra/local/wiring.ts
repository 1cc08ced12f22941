/**
 * The pipeline's wiring on local stand-ins, written once for the local mode and the test harness:
 * DynamoDB Local, local SQS (intake with its dead-letter queue, the rule targets' queues), the
 * local event bus with the CDK app's rules (`infra/topology.ts`), and the functions fed by
 * Lambda-style pollers. The handlers reach the stand-ins only through AWS_ENDPOINT_URL_*, as
 * they reach AWS. Fault hooks let the tests break a part on purpose.
 */
import { join } from "node:path";
import { createSqsServer } from "local-aws-sqs";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb-admin.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { EventPattern } from "../../shared/domain/event-pattern.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import {
  BATCH_LANE,
  DECIDE_FUNCTION,
  MAX_RECEIVE_COUNT,
  RULES,
  TARGET_FUNCTION,
  TARGET_VISIBILITY_SECONDS,
} from "../../shared/domain/topology.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";
import { createBatchQueues, startBatchFilesPoller } from "./batch-files-step.ts";
import { startDynamoDbLocal } from "./dynamodb-local.ts";
import { type LocalEventBus, startEventBus } from "./event-bus.ts";
import { ensurePortFree } from "./ports.ts";
import { type SqsPoller, startSqsPoller } from "./sqs-poller.ts";
import { startTargetQueue, type TargetQueue, type TargetQueueOptions } from "./target-queue.ts";

/** The table name the local stand-ins use. */
export const LOCAL_TABLE = "decisions";
const ACCOUNT_ARN = "arn:aws:sqs:us-east-1:123456789012";

/** Fault hooks and observers for tests; the local mode leaves them unset. */
export interface WiringHooks {
  /** Wraps the decide function's dependencies (fault injection). */
  readonly wrap?: (deps: DecideDependencies) => DecideDependencies;
  /** Makes the bus fail matching PutEvents entries. */
  readonly failBusEntry?: (entry: Record<string, unknown>) => boolean;
  /** Called each time a target applies an effect: an action, or a review task created. */
  readonly onEffect?: (effect: "actioned" | "queued", itemId: string) => void;
}

/** Options of {@link startLocalWiring}. */
export interface WiringOptions {
  /** URL the decide function calls as the SageMaker runtime. */
  readonly endpointUrl: string;
  /** Repository root: the policies folder. */
  readonly root: string;
  /** Ports of the stand-ins (0: a free one; a fixed port is checked free first). */
  readonly ports: { readonly dynamodb: number; readonly sqs: number; readonly bus: number };
  /** Folder for DynamoDB Local's data; in memory when unset. */
  readonly dynamoDbPath?: string;
  /** The intake queue: visibility timeout and receives before the dead-letter queue. */
  readonly intake: { readonly visibilitySeconds: number; readonly maxReceiveCount: number };
  /** Decide pollers (Lambda concurrency). @default 1 */
  readonly decidePollers?: number;
  /** The batch lane: pollers on its queue (its maximum concurrency). @default BATCH_LANE.maxConcurrency */
  readonly batchPollers?: number;
  /** Folder standing in for the pipeline bucket (batch files and results); no batch lane when unset. */
  readonly batchFolder?: string;
  /** Extra function settings (ENDPOINT_TIMEOUT_MS and the like). */
  readonly settings?: Readonly<Record<string, string>>;
  readonly hooks?: WiringHooks;
  /** Each part that starts registers its stop here first, so a failed start can undo it. */
  readonly started: (() => Promise<unknown>)[];
}

/** The wired pipeline. */
export interface LocalWiring {
  /** The variables the functions (and `decide status` / `publish`) need to reach the stand-ins. */
  readonly env: Record<string, string>;
  readonly bus: LocalEventBus;
  readonly queues: {
    readonly intake: SqsQueue;
    readonly deadLetters: SqsQueue;
    readonly autoAction: MessageQueue;
    readonly review: MessageQueue;
    readonly rejected: SqsQueue;
    /** The batch lane's queue (present when a batch folder is set). */
    readonly batch?: SqsQueue;
    /** The batch files step's queue (present with the batch lane). */
    readonly batchFiles?: SqsQueue;
  };
  /** The decide function's dependencies (wrapped when a hook asked). */
  readonly deps: DecideDependencies;
  /** The undecorated dependencies the targets and the review page use. */
  readonly baseDeps: DecideDependencies;
  readonly pollers: {
    readonly decide: SqsPoller[];
    readonly batch: SqsPoller[];
    /** The batch files step's poller. */
    readonly files: SqsPoller[];
    readonly targets: SqsPoller[];
  };
  /** Creates another queue on the local SQS. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<SqsQueue>;
  stop(): Promise<void>;
}

/** Starts the stand-ins and the functions. */
export async function startLocalWiring(options: WiringOptions): Promise<LocalWiring> {
  const { started, hooks = {} } = options;
  await ensurePortFree("dynamodb", options.ports.dynamodb);
  const dynamo = await startDynamoDbLocal({
    port: options.ports.dynamodb || (await freePort()),
    ...(options.dynamoDbPath ? { path: options.dynamoDbPath } : {}),
  });
  started.push(() => dynamo.stop());
  await ensureDecisionsTable(dynamo.endpoint, LOCAL_TABLE);

  await ensurePortFree("sqs", options.ports.sqs);
  const sqsServer = await createSqsServer({
    port: options.ports.sqs || (await freePort()),
    hostname: "127.0.0.1",
  });
  started.push(async () => sqsServer.close());
  const sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as { port: number }).port}`;

  await ensurePortFree("bus", options.ports.bus);
  const bus = await startEventBus({
    name: "decisions",
    ...(options.ports.bus ? { port: options.ports.bus } : {}),
    ...(hooks.failBusEntry ? { failEntry: hooks.failBusEntry } : {}),
  });
  started.push(() => bus.stop());

  const env: Record<string, string> = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqsEndpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: options.endpointUrl,
    DECISIONS_TABLE: LOCAL_TABLE,
    EVENT_BUS_NAME: bus.name,
    DECISION_ENDPOINT_NAME: "decision-endpoint",
    POLICIES_DIR: join(options.root, "events", "policies"),
    POWERTOOLS_LOG_LEVEL: "ERROR",
    POWERTOOLS_METRICS_DISABLED: "true",
    POWERTOOLS_DEV: "false",
    MAX_RECEIVE_COUNT: String(options.intake.maxReceiveCount),
    ...(options.batchFolder ? { BATCH_FOLDER: options.batchFolder } : {}),
    ...options.settings,
  };
  Object.assign(process.env, env);

  const sqs = sqsClient(localServiceOptions(sqsEndpoint));
  const createQueue = (name: string, attributes: Record<string, string> = {}) =>
    SqsQueue.create(sqs, name, attributes);
  const deadLetters = await createQueue("intake-dlq");
  const intake = await createQueue("intake", {
    VisibilityTimeout: String(options.intake.visibilitySeconds),
    RedrivePolicy: JSON.stringify({
      maxReceiveCount: options.intake.maxReceiveCount,
      deadLetterTargetArn: `${ACCOUNT_ARN}:intake-dlq`,
    }),
  });
  await createQueue("targets-dlq");
  // The batch lane's queue and the batch files step's: known before the functions read their environment.
  const { batch: batchQueue, files: filesQueue } = options.batchFolder
    ? await createBatchQueues(createQueue, ACCOUNT_ARN, options.intake)
    : {};
  if (filesQueue) process.env.BATCH_FILES_QUEUE_URL = env.BATCH_FILES_QUEUE_URL = filesQueue.url;
  const rejected = await createQueue("rejected");

  // The functions, imported once the environment points at the stand-ins: their clients read it.
  const { createDecideHandler, dependenciesFromEnv } = await import("../../functions/decide.ts");
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  const baseDeps = await dependenciesFromEnv();
  const deps = hooks.wrap ? hooks.wrap(baseDeps) : baseDeps;

  // The targets as deployed: rule → queue (dead letters after the receive limit) → function.
  const targetQueue = (name: string, pattern: EventPattern, handler: TargetQueueOptions["handler"]) =>
    startTargetQueue({
      createQueue,
      bus,
      name,
      pattern,
      handler,
      visibilityTimeoutSeconds: TARGET_VISIBILITY_SECONDS,
      batchSize: TARGET_FUNCTION.batchSize,
      redrive: { maxReceiveCount: MAX_RECEIVE_COUNT, deadLetterArn: `${ACCOUNT_ARN}:targets-dlq` },
    });
  const targets: TargetQueue[] = [];
  const stopTargets = () => Promise.all(targets.map((target) => target.poller.stop()));
  started.push(stopTargets);
  const autoAction = await targetQueue(
    "auto-action",
    RULES.auto.pattern,
    createAutoActionHandler(
      async () => baseDeps,
      (detail, outcome) => outcome === "actioned" && hooks.onEffect?.("actioned", detail.itemId),
    ),
  );
  targets.push(autoAction);
  const review = await targetQueue(
    "review",
    RULES.human.pattern,
    createReviewIntakeHandler(
      async () => baseDeps,
      (detail, outcome) => outcome === "queued" && hooks.onEffect?.("queued", detail.itemId),
    ),
  );
  targets.push(review);
  bus.addRule({
    name: "rejected",
    pattern: RULES.rejected.pattern,
    target: (e) => rejected.send(JSON.stringify(e)),
  });
  bus.addRule({
    name: "requested",
    pattern: RULES.requested.pattern,
    target: (e) => intake.send(JSON.stringify(e.detail)),
  });

  // One handler per poller, as Lambda runs one invocation per execution environment at a time
  // (the Powertools batch processor keeps per-invocation state).
  const decide = Array.from({ length: options.decidePollers ?? 1 }, () =>
    startSqsPoller({
      queue: intake,
      queueArn: `${ACCOUNT_ARN}:intake`,
      handler: createDecideHandler(async () => deps),
      batchSize: DECIDE_FUNCTION.batchSize,
      functionName: "decide",
    }),
  );
  const batchLane = batchQueue
    ? Array.from({ length: options.batchPollers ?? BATCH_LANE.maxConcurrency }, () =>
        startSqsPoller({
          queue: batchQueue,
          queueArn: `${ACCOUNT_ARN}:batch`,
          handler: createDecideHandler(async () => deps),
          batchSize: DECIDE_FUNCTION.batchSize,
          functionName: "decide-batch",
        }),
      )
    : [];
  const files = filesQueue ? [await startBatchFilesPoller(filesQueue, ACCOUNT_ARN)] : [];
  const stopDecide = () => Promise.all([...decide, ...batchLane, ...files].map((poller) => poller.stop()));
  started.push(stopDecide);
  Object.assign(env, {
    INTAKE_QUEUE_URL: intake.url,
    DLQ_URL: deadLetters.url,
    REVIEW_QUEUE_URL: review.url,
    ...(batchQueue ? { BATCH_QUEUE_URL: batchQueue.url } : {}),
  });

  return {
    env,
    bus,
    queues: {
      intake,
      deadLetters,
      autoAction: autoAction.queue,
      review: review.queue,
      rejected,
      ...(batchQueue ? { batch: batchQueue } : {}),
      ...(filesQueue ? { batchFiles: filesQueue } : {}),
    },
    deps,
    baseDeps,
    pollers: { decide, batch: batchLane, files, targets: targets.map((target) => target.poller) },
    createQueue,
    async stop() {
      await stopDecide();
      await stopTargets();
      await bus.stop();
      sqsServer.close();
      sqs.destroy();
      await dynamo.stop();
    },
  };
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
