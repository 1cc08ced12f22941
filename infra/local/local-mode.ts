/**
 * The whole pipeline on one machine: the decision endpoint, DynamoDB Local, local SQS queues, the
 * local event bus with the CDK app's rules (from `shared/domain/topology.ts`), and the functions, wired
 * the way the stack deploys them. Handlers reach the stand-ins through AWS_ENDPOINT_URL_*.
 */
import { spawnSync } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { type RunningServer, startServer } from "../../endpoint/server/server.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import { MAX_BATCH, type MessageQueue } from "../../shared/domain/message-queue.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { capacityPlan, DECIDE_QUEUES, REVIEW } from "../../shared/domain/topology.ts";
import type { LocalEventBus } from "./event-bus.ts";
import { ensurePortFree, type LocalPorts, resolveLocalPorts } from "./ports.ts";
import { startLocalReviewServer } from "./review-server.ts";
import { startLocalWiring } from "./wiring.ts";

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
  /** Pollers on the batch lane. @default BATCH_LANE.maxConcurrency */
  readonly batchPollers?: number;
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
  /** Resolves when the batches an earlier run left unfinished have been queued again. */
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
  // Sized as the stack sizes one instance: the admission and the pollers fit together.
  const plan = capacityPlan({
    mode: "realtime",
    minInstances: 1,
    maxInstances: 1,
    ...(options.batchPollers ? { batchMaxConcurrency: options.batchPollers } : {}),
  });
  await ensurePortFree("endpoint", ports.endpoint);
  const endpoint: RunningServer = await startServer(
    resolveServerConfig(
      {
        model,
        port: String(ports.endpoint),
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
    throw new Error(`the endpoint could not load ${model}: ${endpoint.service.failureReason}`);
  say(`endpoint: ${endpoint.url} (POST /v1/systemone, /v1/chat/completions)`);

  if (spawnSync("java", ["-version"]).status !== 0) {
    throw new Error(
      "DynamoDB Local needs Java 17, which is not installed here: apt-get install openjdk-17-jre-headless",
    );
  }
  const wiring = await startLocalWiring({
    endpointUrl: endpoint.url,
    root: options.root,
    ports,
    dynamoDbPath: join(options.dataDir, "dynamodb"),
    batchFolder: join(options.dataDir, "bucket"),
    decidePollers: plan.intake,
    batchPollers: plan.batch,
    decideBatchSize: plan.batchSize,
    // Shorter than the deployed one (six times the function timeout): local batches are small and quick.
    intake: {
      visibilitySeconds: 30,
      maxItemFailures: DECIDE_QUEUES.maxItemFailures,
      maxReceiveCount: DECIDE_QUEUES.maxReceiveCount,
    },
    started,
  });
  const { env, queues } = wiring;
  say(`DynamoDB Local: ${env.AWS_ENDPOINT_URL_DYNAMODB}, data in ${join(options.dataDir, "dynamodb")}`);
  say(`SQS: ${env.AWS_ENDPOINT_URL_SQS}; event bus: ${env.AWS_ENDPOINT_URL_EVENTBRIDGE}`);
  const { sharedDependencies, withBatches } = await import("../../functions/dependencies.ts");
  const shared = await sharedDependencies();
  // The last run's workers are gone: an event it decided but had not published yet (a stop
  // between the record and its event) goes out now. Events carry stable ids, so a repeat is harmless.
  const repaired = await publishLeftovers(shared);
  if (repaired > 0) say(`published ${repaired} decision events the last run had not sent before it stopped`);
  await ensurePortFree("review", ports.review);
  const reviewServer = await startLocalReviewServer(
    { ...shared, ...withBatches(), timings: REVIEW, pageSize: REVIEW.pageSize },
    ports.review,
  );
  started.push(() => reviewServer.close());
  const reviewUrl = reviewServer.url;
  say(`review page: ${reviewUrl} (local sign-in at ${reviewUrl}/auth/login)`);
  say(`batch files: ${env.BATCH_FOLDER} (stands in for the pipeline bucket)`);
  // Batches a stop interrupted are read again (their queue did not survive the restart); the
  // decide path does not decide an item twice, so this loses nothing and counts nothing twice.
  const resuming = resumeBatches(
    env,
    shared,
    { batch: wiring.queues.batch!, files: wiring.queues.batchFiles! },
    say,
  );
  started.push(() => resuming);

  const waiting = async (queue: MessageQueue) => (await queue.depth()).visible;
  return {
    endpointUrl: endpoint.url,
    reviewUrl,
    env,
    intakeUrl: queues.intake.url,
    resumed: resuming,
    dlqUrl: queues.deadLetters.url,
    reviewQueueUrl: queues.review.url,
    bus: wiring.bus,
    reviewQueueDepth: () => waiting(queues.review),
    pendingReview: () => everyPending(shared),
    async feedSamples() {
      const lines = (await readFile(join(options.root, "events", "items", "samples.jsonl"), "utf8"))
        .split("\n")
        .filter((l) => l.trim());
      for (let i = 0; i < lines.length; i += MAX_BATCH) {
        const failed = await queues.intake.sendBatch(
          lines.slice(i, i + MAX_BATCH).map((body, j) => ({ id: String(i + j), body })),
        );
        if (failed.length > 0) throw new Error(`samples not sent: ${failed.map((f) => f.reason).join(", ")}`);
      }
      return lines.length;
    },
    async summary() {
      const count = await countByStatus(shared);
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
        deadLetters: await waiting(queues.deadLetters),
        waiting: (await waiting(queues.intake)) + (queues.batch ? await waiting(queues.batch) : 0),
      };
    },
    async stop() {
      await resuming.catch(() => 0);
      await reviewServer.close();
      await wiring.stop();
      await endpoint.close(5_000);
    },
  };
}

/** Runs intake again for every batch that is not completed; returns how many. */
async function resumeBatches(
  env: Record<string, string>,
  shared: { policies: PolicyRegistry },
  queues: { batch: MessageQueue; files: MessageQueue },
  say: (line: string) => void,
): Promise<number> {
  const { DynamoDbBatchStore } = await import("../../shared/adapters/dynamodb-batch-store.ts");
  const { FsObjectStore } = await import("../../shared/adapters/fs-object-store.ts");
  const { documentClient } = await import("../../shared/adapters/aws-clients.ts");
  const { runIntake } = await import("../../shared/use-cases/batch-intake.ts");
  const { queueBatchFiles } = await import("../../shared/use-cases/batch-files.ts");
  const batches = new DynamoDbBatchStore(documentClient(), env.DECISIONS_TABLE!);
  const deps = {
    batches,
    objects: new FsObjectStore(env.BATCH_FOLDER!),
    queue: queues.batch,
    files: queueBatchFiles(queues.files),
    policies: shared.policies,
  };
  let resumed = 0;
  for (const batch of await batches.listBatches(1000)) {
    if (batch.status === "completed") continue;
    try {
      const after = await runIntake(deps, batch.source);
      say(
        `resumed batch ${batch.batchId}: ${after.counts.accepted} items queued again (decided ones are not decided twice)`,
      );
      resumed++;
    } catch (error) {
      say(`could not resume batch ${batch.batchId}: ${(error as Error).message}`);
    }
  }
  return resumed;
}

/** Publishes the event of every record whose event is not marked sent; returns how many. */
async function publishLeftovers(shared: {
  store: DecisionStore;
  policies: PolicyRegistry;
  publisher: PublishesEvents;
}): Promise<number> {
  const { eventFor } = await import("../../shared/use-cases/decide-message.ts");
  let count = 0;
  for await (const record of everyDecision(shared.store, {
    ...allTime(new Date()),
    policyIds: shared.policies.ids(),
  })) {
    if (record.eventPublished) continue;
    await shared.publisher.publish([eventFor(record)]);
    await shared.store.markPublished(record);
    count++;
  }
  return count;
}

/** Every item waiting for review, oldest first (the queue's pages, to its end). */
async function everyPending(shared: { store: DecisionStore; policies: PolicyRegistry }) {
  const records: DecisionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await shared.store.pageReviewQueue({
      policyIds: shared.policies.ids(),
      limit: REVIEW.pageSize,
      countCap: REVIEW.queueCountCap,
      ...(cursor ? { cursor } : {}),
    });
    records.push(...page.records);
    cursor = page.next;
  } while (cursor);
  return records;
}

/** How many records of each status the store holds, read a page at a time. */
async function countByStatus(shared: {
  store: DecisionStore;
  policies: PolicyRegistry;
}): Promise<Record<string, number>> {
  const count: Record<string, number> = {};
  for await (const record of everyDecision(shared.store, {
    ...allTime(new Date()),
    policyIds: shared.policies.ids(),
  }))
    count[record.status] = (count[record.status] ?? 0) + 1;
  return count;
}
