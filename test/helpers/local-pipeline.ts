/**
 * The pipeline on real local services for tests, built on the local mode's own wiring
 * (`infra/local/wiring.ts`): DynamoDB Local in memory, local SQS, the local event bus with the
 * deployed rules, the functions fed by Lambda-style pollers, and the real decision endpoint on
 * the tiny model. What the tests add: fault hooks, routed events and effects recorded per item,
 * and short timeouts derived from the endpoint's measured latency.
 */
import type { RunningServer } from "../../endpoint/server/server.ts";
import type { BusEvent, LocalEventBus } from "../../infra/local/event-bus.ts";
import type { SqsPoller } from "../../infra/local/sqs/sqs-poller.ts";
import { freePort, startLocalWiring } from "../../infra/local/wiring.ts";
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { DECIDE_FUNCTION, DECIDE_QUEUES, RULES } from "../../shared/domain/topology.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";
import { startTestEndpoint } from "./endpoint.ts";
import { generatedModel, REPO_ROOT } from "./models.ts";

export { freePort };

/** A setting given as a value, or as a function read once the endpoint has started (budgets measured on it). */
type Lazy<T> = T | (() => T);
const resolveLazy = <T>(lazy: Lazy<T> | undefined): T | undefined =>
  typeof lazy === "function" ? (lazy as () => T)() : lazy;

/** Options of {@link startLocalPipeline}. */
export interface LocalPipelineOptions {
  /** Failures of an item before the decide function dead-letters it. @default 3 */
  readonly maxItemFailures?: number;
  readonly visibilityTimeoutSeconds?: Lazy<number>;
  /** The overload backoff. @default 1 s doubling up to the visibility timeout */
  readonly overloadBackoff?: Lazy<{ firstSeconds: number; maxSeconds: number }>;
  /** Requests the endpoint lets wait (its admission queue). @default 256 */
  readonly queueSize?: number;
  /** Records per decide invocation. @default DECIDE_FUNCTION.batchSize */
  readonly batchSize?: number;
  readonly failBusEntry?: (entry: Record<string, unknown>) => boolean;
  /** Wraps the dependencies (fault injection). */
  readonly wrap?: (deps: DecideDependencies) => DecideDependencies;
  /** Endpoint URL to use instead of starting the real endpoint (a fault proxy in front of it). */
  readonly endpointUrl?: (real: string) => Promise<string>;
  readonly pollers?: number;
  /** Model file for the endpoint. @default the generated tiny model */
  readonly model?: string;
  /**
   * Model file served as `demo-large`, the second tier of the sample moderation policy's cascade.
   * @default the first model's file again
   */
  readonly tierModel?: string;
  /** Per-call endpoint timeout. @default 5000 */
  readonly endpointTimeoutMs?: Lazy<number>;
  /** Endpoint tries per item. @default the topology's */
  readonly endpointAttempts?: Lazy<number>;
  /** The publish lease. @default half the visibility timeout */
  readonly publishLeaseMs?: Lazy<number>;
  /** The target queues' visibility timeout (a failed effect's retry). @default as deployed */
  readonly targetVisibilitySeconds?: Lazy<number>;
}

/** The running pipeline. */
export interface LocalPipeline {
  readonly intake: SqsQueue;
  readonly deadLetters: SqsQueue;
  /** The human route's queue, drained by the review intake function. */
  readonly reviewQueue: MessageQueue;
  /** The auto route's queue, drained by the auto-action function. */
  readonly autoActionQueue: MessageQueue;
  readonly bus: LocalEventBus;
  readonly endpoint: RunningServer;
  readonly deps: DecideDependencies;
  readonly routed: { auto: BusEvent[]; human: BusEvent[]; rejected: BusEvent[] };
  /**
   * Effects per item: actions applied by auto-action, review tasks created by the review intake,
   * and events either refused because they did not match the item's decision record.
   */
  readonly effects: {
    actioned: Map<string, number>;
    queued: Map<string, number>;
    refused: Map<string, number>;
  };
  readonly pollers: SqsPoller[];
  /** The functions' environment (the stand-ins' endpoints, table and bus): the process's is untouched. */
  readonly env: Readonly<Record<string, string>>;
  /** Messages in a queue waiting to be received. */
  depth(queue: MessageQueue): Promise<number>;
  stop(): Promise<void>;
}

/** Starts everything; call `stop()` in `afterAll`. A failed start stops what had started. */
export async function startLocalPipeline(options: LocalPipelineOptions = {}): Promise<LocalPipeline> {
  const started: (() => Promise<unknown>)[] = [];
  try {
    return await startPipeline(options, started);
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

async function startPipeline(
  options: LocalPipelineOptions,
  started: (() => Promise<unknown>)[],
): Promise<LocalPipeline> {
  const endpoint = await startTestEndpoint({
    "queue-size": String(options.queueSize ?? 256),
    ...(options.model ? { model: options.model } : {}),
    // The sample moderation policy asks a second model (its cascade): the same file serves it here.
    "extra-model": `demo-large=${options.tierModel ?? options.model ?? (await generatedModel())}`,
  });
  started.push(() => endpoint.close());
  const endpointUrl = options.endpointUrl ? await options.endpointUrl(endpoint.url) : endpoint.url;
  const effects: LocalPipeline["effects"] = { actioned: new Map(), queued: new Map(), refused: new Map() };
  const visibilitySeconds = resolveLazy(options.visibilityTimeoutSeconds) ?? 2;
  const backoff = resolveLazy(options.overloadBackoff) ?? { firstSeconds: 1, maxSeconds: visibilitySeconds };
  const wiring = await startLocalWiring({
    endpointUrl,
    root: REPO_ROOT,
    ports: { dynamodb: 0, sqs: 0, bus: 0 },
    intake: {
      visibilitySeconds,
      maxItemFailures: options.maxItemFailures ?? 3,
      maxReceiveCount: DECIDE_QUEUES.maxReceiveCount,
    },
    decidePollers: options.pollers ?? 1,
    ...(options.targetVisibilitySeconds
      ? { targetVisibilitySeconds: resolveLazy(options.targetVisibilitySeconds)! }
      : {}),
    ...(options.batchSize ? { decideBatchSize: options.batchSize } : {}),
    settings: {
      OVERLOAD_BACKOFF_FIRST_SECONDS: String(backoff.firstSeconds),
      OVERLOAD_BACKOFF_MAX_SECONDS: String(backoff.maxSeconds),
      ENDPOINT_TIMEOUT_MS: String(resolveLazy(options.endpointTimeoutMs) ?? 5000),
      ENDPOINT_ATTEMPTS: String(resolveLazy(options.endpointAttempts) ?? DECIDE_FUNCTION.endpointAttempts),
      PUBLISH_LEASE_MS: String(resolveLazy(options.publishLeaseMs) ?? Math.max(200, visibilitySeconds * 500)),
    },
    hooks: {
      ...(options.wrap ? { wrap: options.wrap } : {}),
      ...(options.failBusEntry ? { failBusEntry: options.failBusEntry } : {}),
      onEffect: (effect, itemId) => {
        effects[effect].set(itemId, (effects[effect].get(itemId) ?? 0) + 1);
      },
    },
    started,
  });
  // Observers beside the deployed targets: every event each rule matched.
  const routed: LocalPipeline["routed"] = { auto: [], human: [], rejected: [] };
  for (const route of ["auto", "human", "rejected"] as const)
    wiring.bus.addRule({
      name: `observe-${route}`,
      pattern: RULES[route].pattern,
      target: async (event) => void routed[route].push(event),
    });
  return {
    intake: wiring.queues.intake,
    deadLetters: wiring.queues.deadLetters,
    reviewQueue: wiring.queues.review,
    autoActionQueue: wiring.queues.autoAction,
    bus: wiring.bus,
    endpoint,
    deps: wiring.deps,
    routed,
    effects,
    pollers: wiring.pollers.decide,
    env: wiring.env,
    depth: async (queue) => (await queue.depth()).visible,
    async stop() {
      await wiring.stop();
      await endpoint.close();
    },
  };
}

/** Sends message bodies to `queue` in batches of 10; throws when SQS refuses an entry. */
export async function sendBodies(queue: MessageQueue, bodies: readonly string[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const failed = await queue.sendBatch(
      bodies.slice(i, i + 10).map((body, j) => ({ id: String(i + j), body })),
    );
    if (failed.length > 0) throw new Error(`not sent: ${JSON.stringify(failed)}`);
  }
}
