/**
 * What the async lane's two functions share, read from their environment once: the async
 * endpoint, the bucket its objects live in (the pipeline bucket deployed, a folder locally), the
 * object records, and the lanes' queues by role.
 */
import { DynamoDbAsyncObjectStore } from "../shared/adapters/dynamodb/dynamodb-async-objects.ts";
import { SageMakerAsyncInvoker } from "../shared/adapters/sagemaker-async.ts";
import { SqsQueue } from "../shared/adapters/sqs-queue.ts";
import type { AsyncObjectStore, InvokesAsync } from "../shared/domain/async/async-objects.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import type { ObjectStore } from "../shared/domain/object-store.ts";
import type { AsyncSource } from "../shared/domain/topology.ts";
import type { LaneQueues } from "../shared/use-cases/async/async-failures.ts";
import { dynamoClient, sagemakerClient, sqsClient } from "./support/clients.ts";
import { requireEnv } from "./support/config.ts";
import { batchFilesFromEnv } from "./support/dependencies.ts";

/** The async lane's adapters. */
export interface AsyncLaneAdapters {
  readonly endpointName: string;
  /** The model each request names (ASYNC_MODEL); absent: the endpoint's own. */
  readonly model?: string;
  readonly objects: ObjectStore;
  /** The bucket's name in `s3://` locations: BATCH_BUCKET deployed, ASYNC_LOCATION_BUCKET locally. */
  readonly bucket: string;
  readonly records: AsyncObjectStore;
  readonly endpoint: InvokesAsync;
}

/** Reads ASYNC_ENDPOINT_NAME, the bucket (BATCH_BUCKET, or BATCH_FOLDER with ASYNC_LOCATION_BUCKET) and DECISIONS_TABLE. */
export function asyncLaneFromEnv(env: NodeJS.ProcessEnv = process.env): AsyncLaneAdapters {
  const objects = batchFilesFromEnv(env);
  if (!objects) throw new Error("environment variable BATCH_BUCKET (or BATCH_FOLDER) is required");
  const bucket = env[FUNCTION_ENV.BATCH_BUCKET] || requireEnv(FUNCTION_ENV.ASYNC_LOCATION_BUCKET, env);
  const model = env[FUNCTION_ENV.ASYNC_MODEL];
  return {
    endpointName: requireEnv(FUNCTION_ENV.ASYNC_ENDPOINT_NAME, env),
    ...(model ? { model } : {}),
    objects,
    bucket,
    records: new DynamoDbAsyncObjectStore(dynamoClient(env), requireEnv(FUNCTION_ENV.DECISIONS_TABLE, env)),
    endpoint: new SageMakerAsyncInvoker(sagemakerClient(env)),
  };
}

/** The lane an SQS record came from: the intake when its queue is INTAKE_QUEUE_ARN, else the batch lane. */
export function sourceOf(eventSourceArn: string, env: NodeJS.ProcessEnv = process.env): AsyncSource {
  return env[FUNCTION_ENV.INTAKE_QUEUE_ARN] && eventSourceArn === env[FUNCTION_ENV.INTAKE_QUEUE_ARN]
    ? "intake"
    : "batch";
}

/**
 * Each served lane's queue and dead-letter queue: BATCH_QUEUE_URL and BATCH_DLQ_URL, and
 * INTAKE_QUEUE_URL and INTAKE_DLQ_URL when the live lane runs on the async endpoint too.
 */
export function laneQueuesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Partial<Record<AsyncSource, LaneQueues>> {
  const lane = (queue: string | undefined, deadLetters: string | undefined): LaneQueues | undefined =>
    queue && deadLetters
      ? { queue: new SqsQueue(sqsClient(env), queue), deadLetters: new SqsQueue(sqsClient(env), deadLetters) }
      : undefined;
  const batch = lane(env[FUNCTION_ENV.BATCH_QUEUE_URL], env[FUNCTION_ENV.BATCH_DLQ_URL]);
  const intake = lane(env[FUNCTION_ENV.INTAKE_QUEUE_URL], env[FUNCTION_ENV.INTAKE_DLQ_URL]);
  if (!batch && !intake)
    throw new Error(
      "environment variables BATCH_QUEUE_URL and BATCH_DLQ_URL (or the INTAKE_ pair) are required",
    );
  return { ...(batch ? { batch } : {}), ...(intake ? { intake } : {}) };
}
