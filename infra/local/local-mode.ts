/**
 * The whole pipeline on one machine: the decision endpoint, DynamoDB Local, local SQS queues, the
 * local event bus with the CDK app's rules (from `shared/domain/topology.ts`), and the functions, wired
 * the way the stack deploys them. Handlers reach the stand-ins through AWS_ENDPOINT_URL_*.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { type RunningServer, startServer } from "../../endpoint/server/server.ts";
import { tierEndpointsVariable } from "../../shared/adapters/endpoints-by-model.ts";
import { type CapacityPlan, capacityPlan } from "../../shared/domain/capacity-plan.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { MAX_BATCH, type MessageQueue } from "../../shared/domain/message-queue.ts";
import { DECIDE_QUEUES, MEASURED_SECONDS_PER_ITEM, REVIEW } from "../../shared/domain/topology.ts";
import { resumeAndWatch } from "./batch-resume.ts";
import { stopOrphanedDynamoDb } from "./dynamodb/dynamodb-local.ts";
import type { LocalEventBus } from "./event-bus.ts";
import { localModels } from "./local-models.ts";
import { repairOutbox } from "./local-outbox.ts";
import { everyPending, LiveSummary, type LocalSummary } from "./local-summary.ts";
import { ensurePortFree, ensurePortsFree, type LocalPorts, resolveLocalPorts } from "./ports.ts";
import { startLocalReviewServer } from "./review-server.ts";
import { servedModelNames } from "./served-models.ts";
import { LOCAL_DECISION_ENDPOINT, LOCAL_RECENT_EVENTS } from "./stand-ins.ts";
import { startLocalWiring } from "./wiring.ts";

/** Options of {@link startLocalMode}. */
export interface LocalModeOptions {
  /** Folder for the database and the generated model. */
  readonly dataDir: string;
  /** A GGUF model; otherwise the demo model is used. */
  readonly model?: string;
  /**
   * Where the demo models are fitted and kept; they depend on the checkout alone, so every data
   * folder shares them. @default <root>/.cache/demo-models
   */
  readonly modelsDir?: string;
  /**
   * A decision endpoint already running (`decide serve`, or any server with the SageMaker routes)
   * to use instead of starting one in this process; `model` and the endpoint's port are then unused.
   */
  readonly endpointUrl?: string;
  /** Delete the data from earlier runs first. */
  readonly fresh?: boolean;
  /** Ports by service (0 picks a free one); unset ones take their defaults (`infra/local/ports.ts`). */
  readonly ports?: Partial<LocalPorts>;
  /** Pollers on the batch lane. @default BATCH_LANE.maxConcurrency */
  readonly batchPollers?: number;
  /** Repository root (policies and samples). */
  readonly root: string;
  /** One-line progress messages. */
  readonly say?: (line: string) => void;
}

export type { LocalSummary } from "./local-summary.ts";

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
  /** Resolves when the batches whose intake an earlier run cut off have been read again; how many. */
  readonly resumed: Promise<number>;
  /** Messages in the review queue (visible and in flight), which the review intake drains. */
  reviewQueueDepth(): Promise<number>;
  /** Records waiting for a reviewer. */
  pendingReview(): Promise<DecisionRecord[]>;
  /** Sends the sample items from events/items/samples.jsonl; returns how many. */
  feedSamples(): Promise<number>;
  summary(): Promise<LocalSummary>;
  stop(): Promise<void>;
}

/**
 * Starts everything; resolves once every part answers. Every service's port is checked free
 * before any starts (only services this call starts are ever used), and a failure part-way stops
 * every part that had started, so nothing is left running.
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
  // A run killed with SIGKILL leaves its DynamoDB Local running on the data folder (and its port).
  if (await stopOrphanedDynamoDb(join(options.dataDir, "dynamodb")))
    say("stopped the DynamoDB Local a killed earlier run had left running");
  // Every port first: one taken port stops the start at once, naming each, before anything runs.
  await ensurePortsFree(ports);
  if (options.fresh) await rm(options.dataDir, { recursive: true, force: true });
  await mkdir(join(options.dataDir, "dynamodb"), { recursive: true });

  // Sized as the stack sizes one instance: the admission and the pollers fit together.
  const plan = capacityPlan({
    mode: "realtime",
    minInstances: 1,
    maxInstances: 1,
    ...(options.batchPollers ? { batchMaxConcurrency: options.batchPollers } : {}),
  });
  // An endpoint already running (decide serve, another model server) stands in for the in-process one.
  const endpoint = options.endpointUrl
    ? { url: options.endpointUrl, close: async (_graceMs: number) => undefined }
    : await startEndpoint(options, ports.endpoint, plan, started, say);
  // Whether the queues kept what the last run left (a data folder from before they did has no journal).
  const queuesKept = existsSync(join(options.dataDir, "queues", "sqs.jsonl"));
  const wiring = await startPipeline(options, ports, endpoint.url, plan, started, say);
  const { env, queues } = wiring;
  const left = recoveredLine(wiring.recovered);
  if (left) say(left);
  say("review page: starting...");
  const { sharedDependencies } = await import("../../functions/support/dependencies.ts");
  const shared = await sharedDependencies(env);
  // The last run's workers are gone: an event it decided but had not published yet (a stop
  // between the record and its event) goes out now. Events carry stable ids, so a repeat is harmless.
  const outbox = repairOutbox(shared, say);
  started.push(async () => {
    outbox.stop();
    await outbox.done.catch(() => undefined);
  });
  // The live summary's first count (one pass over the table); refreshes after it read what changed.
  const counts = LiveSummary.start({ ...shared, queues });
  started.push(() => counts.catch(() => undefined));
  const reviewServer = await startReviewServer(shared, env, ports.review, started);
  const reviewUrl = reviewServer.url;
  say(`review page: ${reviewUrl} (local sign-in at ${reviewUrl}/auth/login)`);
  say(`batch files: ${env[FUNCTION_ENV.BATCH_FOLDER]} (stands in for the pipeline bucket)`);
  // Batches whose intake a stop cut off are read again, now and whenever a reader stops while
  // this runs (`batch-resume.ts`); the decide path does not decide an item twice.
  const batchIntakes = resumeAndWatch(
    { env, shared, queues: { batch: queues.batch!, files: queues.batchFiles! }, say },
    queuesKept,
  );
  started.push(batchIntakes.stop);

  return {
    endpointUrl: endpoint.url,
    reviewUrl,
    env,
    intakeUrl: queues.intake.url,
    resumed: batchIntakes.resumed,
    dlqUrl: queues.deadLetters.url,
    reviewQueueUrl: queues.review.url,
    bus: wiring.bus,
    reviewQueueDepth: async () => (await queues.review.depth()).visible,
    pendingReview: () => everyPending(shared),
    feedSamples: () => feedSamples(options.root, queues.intake),
    summary: async () => (await counts).summary(),
    async stop() {
      outbox.stop();
      await outbox.done.catch(() => undefined);
      await batchIntakes.stop();
      await counts.catch(() => undefined);
      await reviewServer.close();
      await wiring.stop();
      await endpoint.close(5_000);
    },
  };
}

/** The stand-ins and the functions, fed by as many pollers as the capacity plan gives one instance. */
async function startPipeline(
  options: LocalModeOptions,
  ports: LocalPorts,
  endpointUrl: string,
  plan: CapacityPlan,
  started: (() => Promise<unknown>)[],
  say: (line: string) => void,
) {
  // An endpoint of its own may not serve a cascade's later tiers: those it does not serve are
  // skipped (the item goes to people) instead of refused item by item.
  const served = options.endpointUrl ? await servedModelNames(options.endpointUrl) : undefined;
  const tiers = served && tierEndpointsVariable(served, LOCAL_DECISION_ENDPOINT);
  if (spawnSync("java", ["-version"]).status !== 0) {
    throw new Error(
      "DynamoDB Local needs Java 17, which is not installed here: apt-get install openjdk-17-jre-headless",
    );
  }
  return startLocalWiring({
    endpointUrl,
    root: options.root,
    ports,
    dynamoDbPath: join(options.dataDir, "dynamodb"),
    // The queues and the bus keep what they accepted here, so no stop loses a message.
    queuesPath: join(options.dataDir, "queues"),
    recentEvents: LOCAL_RECENT_EVENTS,
    batchFolder: join(options.dataDir, "bucket"),
    decidePollers: plan.intake,
    // The pollers follow the local endpoint's one instance, as the deployed capacity follower does.
    follow: { instances: 1, secondsPerItem: MEASURED_SECONDS_PER_ITEM.fresh },
    batchPollers: plan.batch,
    decideBatchSize: plan.batchSize,
    // Shorter than the deployed one (six times the function timeout): local batches are small and quick.
    intake: {
      visibilitySeconds: 30,
      maxItemFailures: DECIDE_QUEUES.maxItemFailures,
      maxReceiveCount: DECIDE_QUEUES.maxReceiveCount,
    },
    ...(tiers === undefined ? {} : { settings: { [FUNCTION_ENV.TIER_ENDPOINTS]: tiers } }),
    started,
    say,
  });
}

/** "recovered 1,558 messages ... (intake 1,500, auto-action 58) and 3 events", or nothing when none. */
function recoveredLine(recovered: { messages: Readonly<Record<string, number>>; events: number }) {
  const byQueue = Object.entries(recovered.messages).sort(([, a], [, b]) => b - a);
  const messages = byQueue.reduce((sum, [, count]) => sum + count, 0);
  if (messages === 0 && recovered.events === 0) return undefined;
  const where = byQueue.map(([queue, count]) => `${queue} ${count}`).join(", ");
  return `recovered what the last run left: ${messages} queued ${messages === 1 ? "message" : "messages"}${where ? ` (${where})` : ""} and ${recovered.events} undelivered ${recovered.events === 1 ? "event" : "events"}`;
}

/** The review pages and API on `port` (checked free first), with the local sign-in stub. */
async function startReviewServer(
  shared: Awaited<ReturnType<typeof import("../../functions/support/dependencies.ts").sharedDependencies>>,
  env: Record<string, string>,
  port: number,
  started: (() => Promise<unknown>)[],
) {
  const { withBatches } = await import("../../functions/support/dependencies.ts");
  await ensurePortFree("review", port);
  const server = await startLocalReviewServer(
    { ...shared, ...withBatches(env), timings: REVIEW, pageSize: REVIEW.pageSize },
    port,
  );
  started.push(() => server.close());
  return server;
}

/**
 * Loads the model (the demo one unless given) and the later tiers the policies' cascades name,
 * and starts the decision endpoint on `port`, its admission queue and deadline from the capacity
 * plan.
 */
async function startEndpoint(
  options: LocalModeOptions,
  port: number,
  plan: Pick<CapacityPlan, "queueSize" | "deadlineMs">,
  started: (() => Promise<unknown>)[],
  say: (line: string) => void,
): Promise<RunningServer> {
  const models = await localModels(options, say);
  await ensurePortFree("endpoint", port);
  say("endpoint: loading the model...");
  const endpoint: RunningServer = await startServer(
    resolveServerConfig(
      {
        model: models.first,
        ...(models.tiers.length > 0 ? { "extra-model": models.tiers.map((t) => `${t.name}=${t.path}`) } : {}),
        port: String(port),
        gpu: "off",
        "queue-size": String(plan.queueSize),
        "deadline-ms": String(plan.deadlineMs),
      },
      {},
    ),
    { logger: new Logger({ serviceName: "local-endpoint", logLevel: "ERROR" }) },
  );
  started.push(() => endpoint.close(1_000));
  await endpoint.service.ready;
  if (endpoint.service.state !== "ready")
    throw new Error(`the endpoint could not load ${models.first}: ${endpoint.service.failureReason}`);
  say(`endpoint: ${endpoint.url} (POST /v1/systemone, /v1/chat/completions)`);
  return endpoint;
}

/** Sends the sample items from events/items/samples.jsonl to `intake`; returns how many. */
async function feedSamples(root: string, intake: MessageQueue): Promise<number> {
  const lines = (await readFile(join(root, "events", "items", "samples.jsonl"), "utf8"))
    .split("\n")
    .filter((l) => l.trim());
  for (let i = 0; i < lines.length; i += MAX_BATCH) {
    const failed = await intake.sendBatch(
      lines.slice(i, i + MAX_BATCH).map((body, j) => ({ id: String(i + j), body })),
    );
    if (failed.length > 0) throw new Error(`samples not sent: ${failed.map((f) => f.reason).join(", ")}`);
  }
  return lines.length;
}
