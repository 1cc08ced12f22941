/**
 * The adapters every function shares, built from the environment once per execution environment.
 */
import { fileURLToPath } from "node:url";
import { DynamoDbBatchStore } from "../shared/adapters/dynamodb-batch-store.ts";
import { DynamoDbDecisionStore } from "../shared/adapters/dynamodb-decision-store.ts";
import { EventPublisher } from "../shared/adapters/event-publisher.ts";
import { FsObjectStore } from "../shared/adapters/fs-object-store.ts";
import { S3ObjectStore } from "../shared/adapters/s3-object-store.ts";
import type { DecisionStore } from "../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../shared/domain/events.ts";
import type { ObjectStore } from "../shared/domain/object-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { EVENT_PUBLISHING } from "../shared/domain/topology.ts";
import type { BatchDependencies } from "../shared/use-cases/batch-progress.ts";
import { dynamoClient, eventBridgeClient, s3Client } from "./clients.ts";
import { requireEnv } from "./config.ts";

/** Default policies: the samples shipped beside the functions. */
export const BUNDLED_POLICIES = fileURLToPath(new URL("../events/policies", import.meta.url));

/**
 * Where batch files and results live: the pipeline bucket (BATCH_BUCKET) deployed, a folder
 * (BATCH_FOLDER) in the local mode; undefined when neither is set (no batches here).
 */
export function batchFilesFromEnv(env: NodeJS.ProcessEnv = process.env): ObjectStore | undefined {
  if (env.BATCH_BUCKET) return new S3ObjectStore(s3Client(), env.BATCH_BUCKET);
  if (env.BATCH_FOLDER) return new FsObjectStore(env.BATCH_FOLDER);
  return undefined;
}

/** Batch progress on the decisions table and the batch files, when batch files are configured. */
export function batchDependenciesFromEnv(
  shared: SharedDependencies,
  env: NodeJS.ProcessEnv = process.env,
): BatchDependencies | undefined {
  const objects = batchFilesFromEnv(env);
  if (!objects) return undefined;
  return {
    batches: new DynamoDbBatchStore(dynamoClient(), requireEnv("DECISIONS_TABLE", env)),
    objects,
    publisher: shared.publisher,
  };
}

/** `{ batches }` when batch files are configured, else nothing (spread into a function's dependencies). */
export function withBatches(shared: SharedDependencies): { batches?: BatchDependencies } {
  const batches = batchDependenciesFromEnv(shared);
  return batches ? { batches } : {};
}

/** Store, publisher and policies. */
export interface SharedDependencies {
  readonly policies: PolicyRegistry;
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
}

/** Reads DECISIONS_TABLE, EVENT_BUS_NAME and POLICIES_DIR (optional). */
export async function sharedDependencies(env: NodeJS.ProcessEnv = process.env): Promise<SharedDependencies> {
  return {
    policies: await PolicyRegistry.fromFolder(env.POLICIES_DIR || BUNDLED_POLICIES),
    store: new DynamoDbDecisionStore(dynamoClient(), requireEnv("DECISIONS_TABLE", env)),
    publisher: new EventPublisher(eventBridgeClient(), requireEnv("EVENT_BUS_NAME", env), EVENT_PUBLISHING),
  };
}
