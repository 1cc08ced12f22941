/**
 * The pipeline's wiring on local stand-ins, written once for the local mode and the test harness:
 * DynamoDB Local, local SQS (intake with its dead-letter queue, the rule targets' queues), the
 * local event bus with the CDK app's rules (`shared/domain/topology.ts`), and the functions fed by
 * Lambda-style pollers. The handlers reach the stand-ins only through AWS_ENDPOINT_URL_*, as
 * they reach AWS. Fault hooks let the tests break a part on purpose.
 */
import { join } from "node:path";
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb-admin.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
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
import { startBatchFilesPoller } from "./batch-files-step.ts";
import { startDynamoDbLocal } from "./dynamodb-local.ts";
import { type LocalEventBus, startEventBus } from "./event-bus.ts";
import {
  createLocalQueues,
  LOCAL_ARN,
  type LocalQueues,
  localRoutes,
  ruleDeadLetter,
} from "./local-queues.ts";
import { ensurePortFree } from "./ports.ts";
import { type SqsPoller, startSqsPoller } from "./sqs-poller.ts";
import { startLocalSqs } from "./sqs-server.ts";
import { startTargetQueue, type TargetQueue, type TargetQueueOptions } from "./target-queue.ts";

/** The table name the local stand-ins use. */
export const LOCAL_TABLE = "decisions";

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
  /**
   * The decide queues (intake, batch lane): visibility timeout, the item failures before the
   * decide function dead-letters an item, and SQS's own receive limit (the backstop).
   */
  readonly intake: {
    readonly visibilitySeconds: number;
    readonly maxItemFailures: number;
    readonly maxReceiveCount: number;
  };
  /** Decide pollers (Lambda concurrency). @default 1 */
  readonly decidePollers?: number;
  /** Records per decide invocation (both lanes). @default DECIDE_FUNCTION.batchSize */
  readonly decideBatchSize?: number;
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
  /** The queues of `local-queues.ts` and the targets' queues with their dead-letter queues. */
  readonly queues: LocalQueues & {
    readonly autoAction: MessageQueue;
    readonly autoActionDeadLetters: MessageQueue;
    readonly review: MessageQueue;
    readonly reviewDeadLetters: MessageQueue;
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
  const sqsServer = await startLocalSqs({
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
    MAX_ITEM_FAILURES: String(options.intake.maxItemFailures),
    ...(options.batchFolder ? { BATCH_FOLDER: options.batchFolder } : {}),
    ...options.settings,
  };
  Object.assign(process.env, env);

  const sqs = sqsClient(localServiceOptions(sqsEndpoint));
  const createQueue = (name: string, attributes: Record<string, string> = {}) =>
    SqsQueue.create(sqs, name, attributes);
  // The batch lane is consumed by fewer pollers than the intake, so a large batch cannot take every worker.
  const queues = await createLocalQueues(createQueue, { ...options.intake, batch: !!options.batchFolder });
  const { intake, rejected, ruleDeadLetters } = queues;
  const batchQueue = queues.batch;
  // The batch files step's queue: known before the functions read their environment.
  const filesQueue = queues.batchFiles;
  if (filesQueue) process.env.BATCH_FILES_QUEUE_URL = env.BATCH_FILES_QUEUE_URL = filesQueue.url;

  // The functions, imported once the environment points at the stand-ins: their clients read it.
  const { createDecideHandler, dependenciesFromEnv } = await import("../../functions/decide.ts");
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  const baseDeps = await dependenciesFromEnv();
  const deps = hooks.wrap ? hooks.wrap(baseDeps) : baseDeps;

  // The targets as deployed: rule → queue (dead letters after the receive limit) → function.
  const targetQueue = (name: string, rule: "auto" | "human", handler: TargetQueueOptions["handler"]) =>
    startTargetQueue({
      createQueue,
      bus,
      name,
      pattern: RULES[rule].pattern,
      handler,
      visibilityTimeoutSeconds: TARGET_VISIBILITY_SECONDS,
      batchSize: TARGET_FUNCTION.batchSize,
      maxReceiveCount: MAX_RECEIVE_COUNT,
      ruleDeadLetter: ruleDeadLetter(ruleDeadLetters[rule], rule, `${LOCAL_ARN}:${name}`),
    });
  const targets: TargetQueue[] = [];
  const stopTargets = () => Promise.all(targets.map((target) => target.poller.stop()));
  started.push(stopTargets);
  const autoAction = await targetQueue(
    "auto-action",
    "auto",
    createAutoActionHandler(
      async () => baseDeps,
      (detail, outcome) => outcome === "actioned" && hooks.onEffect?.("actioned", detail.itemId),
    ),
  );
  targets.push(autoAction);
  const review = await targetQueue(
    "review",
    "human",
    createReviewIntakeHandler(
      async () => baseDeps,
      (detail, outcome) => outcome === "queued" && hooks.onEffect?.("queued", detail.itemId),
    ),
  );
  targets.push(review);
  bus.addRule({
    name: "rejected",
    pattern: RULES.rejected.pattern,
    target: async (e) => void (await rejected.send(JSON.stringify(e))),
    deadLetter: ruleDeadLetter(ruleDeadLetters.rejected, "rejected", `${LOCAL_ARN}:rejected`),
  });
  bus.addRule({
    name: "requested",
    pattern: RULES.requested.pattern,
    target: async (e) => void (await intake.send(JSON.stringify(e.detail))),
    deadLetter: ruleDeadLetter(ruleDeadLetters.requested, "requested", `${LOCAL_ARN}:intake`),
  });

  // One handler per poller, as Lambda runs one invocation per execution environment at a time
  // (the Powertools batch processor keeps per-invocation state); the pollers of a queue share
  // its receive counts.
  const decidePollers = (queue: SqsQueue, name: string, count: number) => {
    const receives = new Map<string, number>();
    return Array.from({ length: count }, () =>
      startSqsPoller({
        queue,
        queueArn: `${LOCAL_ARN}:${name}`,
        handler: createDecideHandler(async () => deps),
        batchSize: options.decideBatchSize ?? DECIDE_FUNCTION.batchSize,
        functionName: name === "intake" ? "decide" : "decide-batch",
        receives,
      }),
    );
  };
  const decide = decidePollers(intake, "intake", options.decidePollers ?? 1);
  const batchLane = batchQueue
    ? decidePollers(batchQueue, "batch", options.batchPollers ?? BATCH_LANE.maxConcurrency)
    : [];
  const files = filesQueue ? [await startBatchFilesPoller(filesQueue, LOCAL_ARN)] : [];
  const stopDecide = () => Promise.all([...decide, ...batchLane, ...files].map((poller) => poller.stop()));
  started.push(stopDecide);
  const routes = localRoutes(
    queues,
    {
      review: { queue: review.url, dlq: review.deadLetters.url },
      autoAction: { queue: autoAction.url, dlq: autoAction.deadLetters.url },
    },
    bus.name,
  );
  Object.assign(env, {
    INTAKE_QUEUE_URL: intake.url,
    DLQ_URL: queues.deadLetters.url,
    REVIEW_QUEUE_URL: review.url,
    ...(batchQueue ? { BATCH_QUEUE_URL: batchQueue.url } : {}),
    DEAD_LETTER_ROUTES: JSON.stringify(routes),
  });

  return {
    env,
    bus,
    queues: {
      ...queues,
      autoAction: autoAction.queue,
      autoActionDeadLetters: autoAction.deadLetters,
      review: review.queue,
      reviewDeadLetters: review.deadLetters,
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
