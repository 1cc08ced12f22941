/**
 * The CLI's way to AWS (or the local mode's stand-ins): the AWS CLI's conventions (--region,
 * --profile, AWS_REGION, AWS_ENDPOINT_URL_*) turned into client options once, and the adapters
 * the commands use built from them. No command builds an SDK client by hand.
 */
import {
  type AwsClientOptions,
  documentClient,
  eventBridgeClient,
  localServiceOptions,
  s3Client,
  sageMakerRuntimeClient,
  sqsClient,
} from "../shared/adapters/aws-clients.ts";
import {
  type EndpointClientOptions,
  SageMakerDecisionEndpoint,
} from "../shared/adapters/decision-endpoint.ts";
import { DynamoDbAsyncObjectStore } from "../shared/adapters/dynamodb/dynamodb-async-objects.ts";
import { DynamoDbBatchStore } from "../shared/adapters/dynamodb/dynamodb-batch-store.ts";
import { DynamoDbDecisionStore } from "../shared/adapters/dynamodb/dynamodb-decision-store.ts";
import { EventPublisher, type EventPublisherOptions } from "../shared/adapters/event-publisher.ts";
import { FsObjectStore } from "../shared/adapters/fs-object-store.ts";
import { S3ObjectStore } from "../shared/adapters/s3-object-store.ts";
import { SqsQueue } from "../shared/adapters/sqs-queue.ts";
import type { ObjectStore } from "../shared/domain/object-store.ts";
import { EVENT_PUBLISHING } from "../shared/domain/topology.ts";

/** The connection flags every AWS-facing command takes. */
export const AWS_FLAGS = {
  region: { type: "string" },
  profile: { type: "string" },
} as const;

/** Client options from `--region` / `--profile` and the environment. */
export function awsOptions(values: {
  region?: string | undefined;
  profile?: string | undefined;
}): AwsClientOptions {
  // The SDK reads the profile from the environment; setting it here makes --profile mean what it does in the AWS CLI.
  if (values.profile) process.env.AWS_PROFILE = values.profile;
  const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  return region ? { region } : {};
}

/** Batches in the decisions table. */
export function batchStore(table: string, options: AwsClientOptions): DynamoDbBatchStore {
  return new DynamoDbBatchStore(documentClient(options), table);
}

/** Where batch files live: the pipeline bucket, or the local mode's folder. */
export function batchFiles(
  where: { bucket?: string | undefined; folder?: string | undefined },
  options: AwsClientOptions,
): ObjectStore {
  if (where.bucket) return new S3ObjectStore(s3Client(options), where.bucket);
  if (where.folder) return new FsObjectStore(where.folder);
  throw new RangeError("a bucket or a folder is needed");
}

/** The decisions table. */
export function decisionStore(table: string, options: AwsClientOptions): DynamoDbDecisionStore {
  return new DynamoDbDecisionStore(documentClient(options), table);
}

/** The async lane's object records in the decisions table. */
export function asyncObjectStore(table: string, options: AwsClientOptions): DynamoDbAsyncObjectStore {
  return new DynamoDbAsyncObjectStore(documentClient(options), table);
}

/**
 * A queue by URL. A URL outside AWS (the local mode's `http://127.0.0.1:9324/...`) is also the
 * endpoint when none is configured: the SDK would otherwise resolve AWS's own endpoint, warn on
 * every call that the queue URL differs from it, and fail on credentials it does not need.
 */
export function queueAt(url: string, options: AwsClientOptions): SqsQueue {
  const endpoint = options.endpoint ?? process.env.AWS_ENDPOINT_URL_SQS ?? process.env.AWS_ENDPOINT_URL;
  const local = !endpoint && !new URL(url).hostname.endsWith(".amazonaws.com");
  return new SqsQueue(
    sqsClient(local ? { ...localServiceOptions(new URL(url).origin), ...options } : options),
    url,
  );
}

/**
 * The source of the events an operator's `decide` command puts on the bus: only the pipeline's
 * functions may put the pipeline's own source (the bus's policy refuses it to anyone else).
 */
const CLI_SOURCE = "decide.cli";

/** An event publisher to `busName`, trying as the topology says (`EVENT_PUBLISHING`), as {@link CLI_SOURCE}. */
export function publisherTo(
  busName: string,
  options: AwsClientOptions,
  publisher: Pick<EventPublisherOptions, "source"> = {},
): EventPublisher {
  return new EventPublisher(eventBridgeClient(options), busName, {
    ...EVENT_PUBLISHING,
    source: CLI_SOURCE,
    ...publisher,
  });
}

/** The SageMaker endpoint `name`, through the SageMaker runtime client, called as `client` says. */
export function sageMakerEndpoint(
  name: string,
  options: AwsClientOptions,
  client: EndpointClientOptions,
): SageMakerDecisionEndpoint {
  return new SageMakerDecisionEndpoint(sageMakerRuntimeClient(options), name, client);
}
