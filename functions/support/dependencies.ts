/**
 * The adapters every function shares, built from the environment once per execution environment.
 */
import { fileURLToPath } from "node:url";
import { DynamoDbBatchStore } from "../../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { DynamoDbDecisionStore } from "../../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { EventPublisher } from "../../shared/adapters/event-publisher.ts";
import { FsObjectStore } from "../../shared/adapters/fs-object-store.ts";
import { S3ObjectStore } from "../../shared/adapters/s3-object-store.ts";
import { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { type Clock, systemClock } from "../../shared/domain/clock.ts";
import type { DecisionStore } from "../../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import type { ObjectStore } from "../../shared/domain/object-store.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { EVENT_PUBLISHING } from "../../shared/domain/topology.ts";
import { queueBatchFiles } from "../../shared/use-cases/batch-files.ts";
import type { BatchDependencies } from "../../shared/use-cases/batch-progress.ts";
import { dynamoClient, eventBridgeClient, s3Client, sqsClient } from "./clients.ts";
import { requireEnv } from "./config.ts";

/** Default policies: the samples shipped beside the functions. */
export const BUNDLED_POLICIES = fileURLToPath(new URL("../../events/policies", import.meta.url));

/**
 * Where batch files and results live: the pipeline bucket (BATCH_BUCKET) deployed, a folder
 * (BATCH_FOLDER) in the local mode; undefined when neither is set (no batches here).
 */
export function batchFilesFromEnv(env: NodeJS.ProcessEnv = process.env): ObjectStore | undefined {
  const bucket = env[FUNCTION_ENV.BATCH_BUCKET];
  if (bucket) return new S3ObjectStore(s3Client(env), bucket);
  const folder = env[FUNCTION_ENV.BATCH_FOLDER];
  if (folder) return new FsObjectStore(folder);
  return undefined;
}

/**
 * Batch progress on the decisions table, asking the batch files step (its queue,
 * BATCH_FILES_QUEUE_URL) for the files; undefined where that is not set (no batches here).
 */
export function batchDependenciesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): BatchDependencies | undefined {
  const url = env[FUNCTION_ENV.BATCH_FILES_QUEUE_URL];
  if (!url) return undefined;
  return {
    batches: new DynamoDbBatchStore(dynamoClient(env), requireEnv(FUNCTION_ENV.DECISIONS_TABLE, env)),
    files: queueBatchFiles(new SqsQueue(sqsClient(env), url)),
    now: systemClock,
  };
}

/**
 * What the batch intake and batch files functions share: the adapters, batch progress and the
 * batch files (both required).
 */
export async function batchJobFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ shared: SharedDependencies; batches: BatchDependencies; objects: ObjectStore }> {
  const shared = await sharedDependencies(env);
  const batches = batchDependenciesFromEnv(env);
  if (!batches) throw new Error("environment variable BATCH_FILES_QUEUE_URL is not set");
  const objects = batchFilesFromEnv(env);
  if (!objects) throw new Error("environment variable BATCH_BUCKET (or BATCH_FOLDER) is not set");
  return { shared, batches, objects };
}

/** `{ batches }` when the batch files step is configured, else nothing (spread into a function's dependencies). */
export function withBatches(env: NodeJS.ProcessEnv = process.env): { batches?: BatchDependencies } {
  const batches = batchDependenciesFromEnv(env);
  return batches ? { batches } : {};
}

/** Store, publisher and policies. */
export interface SharedDependencies {
  readonly policies: PolicyRegistry;
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
  /** The one clock of every handler (a test composes its own). */
  readonly now: Clock;
}

/** Reads DECISIONS_TABLE, EVENT_BUS_NAME and POLICIES_DIR (optional). */
export async function sharedDependencies(env: NodeJS.ProcessEnv = process.env): Promise<SharedDependencies> {
  return {
    policies: await PolicyRegistry.fromFolder(env[FUNCTION_ENV.POLICIES_DIR] || BUNDLED_POLICIES),
    store: new DynamoDbDecisionStore(dynamoClient(env), requireEnv(FUNCTION_ENV.DECISIONS_TABLE, env)),
    publisher: new EventPublisher(
      eventBridgeClient(env),
      requireEnv(FUNCTION_ENV.EVENT_BUS_NAME, env),
      EVENT_PUBLISHING,
    ),
    now: systemClock,
  };
}
