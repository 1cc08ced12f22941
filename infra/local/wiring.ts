/**
 * The deployed pipeline's wiring, run locally (`npm start` and the integration tests): the
 * stand-ins (DynamoDB Local, SQS, the bus) started, the bus's rules routed into their queues
 * (`bus-targets.ts`), and the functions' own handlers on pollers that play Lambda's event-source
 * mappings (decide, the targets, the batch files step, the async lane, the capacity follower). One
 * place where the local mode meets the functions, so that they run as deployed with only the
 * clients' endpoints pointed at the stand-ins.
 */
import { localServiceOptions, sqsClient } from "../../shared/adapters/aws-clients.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { CLI_ENV, FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { TARGET_VISIBILITY_SECONDS } from "../../shared/domain/topology.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";
import { type AsyncLaneWiring, type LocalAsyncLane, startAsyncLaneOf } from "./async-lane.ts";
import { addQueueRules, startTargets, type TargetHooks } from "./bus-targets.ts";
import { startDecidePollers } from "./decide-pollers.ts";
import type { LocalEventBus } from "./event-bus.ts";
import { startLocalFollower } from "./local-follower.ts";
import { createLocalQueues, type LocalQueues, localRoutes } from "./local-queues.ts";
import type { PollerGroup } from "./poller-group.ts";
import type { SqsPoller } from "./sqs/sqs-poller.ts";
import { quietPowertools, startStandIns, wiringEnvironment } from "./stand-ins.ts";
import type { TargetQueue } from "./target-queue.ts";

export { freePort, LOCAL_TABLE } from "./stand-ins.ts";

/** Fault hooks and observers for tests; the local mode leaves them unset. */
export interface WiringHooks extends TargetHooks {
  /** Wraps the decide function's dependencies (fault injection). */
  readonly wrap?: (deps: DecideDependencies) => DecideDependencies;
  /** Makes the bus fail matching PutEvents entries. */
  readonly failBusEntry?: (entry: Record<string, unknown>) => boolean;
}

/** Options of {@link startLocalWiring} (the async lane's: `batchLane`, `asyncLane`). */
export interface WiringOptions extends AsyncLaneWiring {
  /** Repository root: the policies folder. */
  readonly root: string;
  /** Ports of the stand-ins (0: a free one; a fixed port is checked free first). */
  readonly ports: { readonly dynamodb: number; readonly sqs: number; readonly bus: number };
  /** Folder for DynamoDB Local's data; in memory when unset. */
  readonly dynamoDbPath?: string;
  /** Folder for the queues' and the bus's journals, so a stop loses no message; in memory when unset. */
  readonly queuesPath?: string;
  /** Events the bus's log keeps. @default every event */
  readonly recentEvents?: number;
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
  /**
   * The target queues' visibility timeout: how long a target's failed message waits before its
   * retry. Tests shorten it to their measured budgets. @default TARGET_VISIBILITY_SECONDS, as deployed
   */
  readonly targetVisibilitySeconds?: number;
  /**
   * The capacity follower: the decide pollers follow this many endpoint instances, and the
   * overload backoff starts from the expected wait at `secondsPerItem`. @default none: the
   * pollers stay at `decidePollers`, the backoff on its fixed schedule
   */
  readonly follow?: {
    readonly instances: number;
    readonly secondsPerItem: number;
    readonly periodMs?: number;
  };
  /** Records per decide invocation (both lanes). @default DECIDE_FUNCTION.batchSize */
  readonly decideBatchSize?: number;
  /** The batch lane: pollers on its queue (its maximum concurrency). @default BATCH_LANE.maxConcurrency */
  readonly batchPollers?: number;
  /** Extra function settings (ENDPOINT_TIMEOUT_MS and the like). */
  readonly settings?: Readonly<Record<string, string>>;
  readonly hooks?: WiringHooks;
  /** Each part that starts registers its stop here first, so a failed start can undo it. */
  readonly started: (() => Promise<unknown>)[];
  /** Names each part as it starts, and where it listens once it does. */
  readonly say?: (line: string) => void;
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
  /** What an earlier run left (with `queuesPath`): messages by queue, and events not yet delivered. */
  readonly recovered: { readonly messages: Readonly<Record<string, number>>; readonly events: number };
  /** The async lane, when the batch lane runs on it. */
  readonly asyncLane?: LocalAsyncLane;
  /** Creates another queue on the local SQS. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<SqsQueue>;
  stop(): Promise<void>;
}

/** Starts the stand-ins and the functions. */
export async function startLocalWiring(options: WiringOptions): Promise<LocalWiring> {
  const { started, hooks = {} } = options;
  const parts = await startStandIns(options);
  const { dynamo, bus } = parts;
  // The functions' environment, passed to them explicitly (AWS_ENDPOINT_URL_* points their
  // clients at the stand-ins); of the process environment only Powertools' own settings are
  // filled in, before the functions create their loggers.
  const env = wiringEnvironment(options, parts);
  quietPowertools();
  const sqs = sqsClient(localServiceOptions(parts.sqsEndpoint));
  const createQueue = (name: string, attributes: Record<string, string> = {}) =>
    SqsQueue.create(sqs, name, attributes);
  // The batch lane is consumed by fewer pollers than the intake, so a large batch cannot take every worker.
  const queues = await createLocalQueues(createQueue, { ...options.intake, batch: !!options.batchFolder });
  // The batch files step's queue: known before the functions read their environment.
  if (queues.batchFiles) env[FUNCTION_ENV.BATCH_FILES_QUEUE_URL] = queues.batchFiles.url;

  // Imported here, not above: the local mode loads the functions only when it starts them.
  options.say?.("functions: loading decide, auto-action, review intake and the batch steps...");
  const { dependenciesFromEnv, endpointFromEnv } = await import("../../functions/decide.ts");
  const baseDeps = await dependenciesFromEnv(env);
  const deps = hooks.wrap ? hooks.wrap(baseDeps) : baseDeps;
  // Each poller stands for one Lambda execution environment, with its own endpoint client: a
  // shared one would merge the records of several invocations into one call, as Lambda never does.
  const pollerDeps = () => {
    const own = { ...baseDeps, endpoint: endpointFromEnv(env) };
    return hooks.wrap ? hooks.wrap(own) : own;
  };
  const targets = await startTargets({
    createQueue,
    bus,
    queues,
    baseDeps,
    hooks,
    visibilitySeconds: options.targetVisibilitySeconds ?? TARGET_VISIBILITY_SECONDS,
  });
  started.push(targets.stop);
  addQueueRules(bus, queues);
  const asyncLane = await startAsyncLaneOf(options, queues, env, createQueue);
  if (asyncLane) started.push(asyncLane.stop);
  // Every rule is in place: the events an earlier run accepted and had not delivered go out now.
  const recoveredEvents = bus.recover();
  const pollers = await startDecidePollers(options, queues, pollerDeps, env);
  started.push(pollers.stop);
  if (options.follow) started.push(await followCapacityLocally(options.follow, queues, pollers.intake, env));
  const { review, autoAction } = targets;
  exportQueues(env, queues, targets, asyncLane);
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
    pollers: { ...pollers.all, targets: [autoAction.poller, review.poller] },
    recovered: { messages: parts.sqs.recovered, events: recoveredEvents },
    ...(asyncLane ? { asyncLane } : {}),
    createQueue,
    async stop() {
      await asyncLane?.stop();
      await pollers.stop();
      await targets.stop();
      await bus.stop();
      await parts.sqs.close();
      sqs.destroy();
      const { destroyClients } = await import("../../functions/support/clients.ts");
      destroyClients(env);
      await dynamo.stop();
    },
  };
}

/** The queues and dead-letter routes `decide status`, `publish` and `replay` read, added to `env`. */
function exportQueues(
  env: Record<string, string>,
  queues: LocalQueues,
  targets: { review: TargetQueue; autoAction: TargetQueue },
  asyncLane: LocalAsyncLane | undefined,
): void {
  const { review, autoAction } = targets;
  const routes = localRoutes(queues, {
    review: { queue: review.url, dlq: review.deadLetters.url },
    autoAction: { queue: autoAction.url, dlq: autoAction.deadLetters.url },
    ...(asyncLane
      ? {
          asyncResults: { queue: asyncLane.notifications.url, dlq: asyncLane.notificationsDeadLetters.url },
        }
      : {}),
  });
  Object.assign(env, {
    [FUNCTION_ENV.INTAKE_QUEUE_URL]: queues.intake.url,
    [CLI_ENV.DLQ_URL]: queues.deadLetters.url,
    [CLI_ENV.REVIEW_QUEUE_URL]: review.url,
    ...(queues.batch ? { [FUNCTION_ENV.BATCH_QUEUE_URL]: queues.batch.url } : {}),
    [FUNCTION_ENV.DEAD_LETTER_ROUTES]: JSON.stringify(routes),
  });
}

/** The capacity follower on the local intake, its pollers and the local table; returns its stop. */
async function followCapacityLocally(
  follow: NonNullable<WiringOptions["follow"]>,
  queues: LocalQueues,
  intakePollers: PollerGroup,
  env: NodeJS.ProcessEnv,
): Promise<() => Promise<void>> {
  const { DynamoDbFleetReadings } = await import("../../shared/adapters/dynamodb/dynamodb-fleet-readings.ts");
  const { dynamoClient } = await import("../../functions/support/clients.ts");
  return startLocalFollower({
    ...follow,
    intake: queues.intake,
    mapping: intakePollers,
    readings: new DynamoDbFleetReadings(dynamoClient(env), env[FUNCTION_ENV.DECISIONS_TABLE]!),
  });
}
