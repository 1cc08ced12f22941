/**
 * The one place AWS SDK clients are built, for the Lambda functions, the CLI and the local mode.
 * Every client gets connection and request timeouts. Where and as whom a client connects comes
 * from its options, which {@link awsOptionsFromEnv} reads from an environment given explicitly
 * (the local mode hands its functions one that points at the stand-ins); without options the
 * SDK's own chain reads the process environment.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { S3Client } from "@aws-sdk/client-s3";
import { SageMakerClient } from "@aws-sdk/client-sagemaker";
import { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/**
 * Every call gets an answer or an error: the SDK waits forever on a connection that never
 * answers unless told otherwise. A call with no response headers after `requestTimeout` fails
 * with a TimeoutError (`throwOnRequestTimeout`: without it the SDK only logs a warning), is
 * retried by the SDK (3 tries), then fails like any other transient error. These services answer
 * in milliseconds; S3, whose uploads from the command line may take minutes on a slow link, gets
 * {@link S3_TIMEOUTS} instead, and SageMaker {@link ENDPOINT_TIMEOUTS}.
 */
export const SDK_REQUEST_TIMEOUTS = {
  connectionTimeout: 3_000,
  requestTimeout: 10_000,
  throwOnRequestTimeout: true,
} as const;

/**
 * S3: no bound on the whole request (a large upload is slow, not stuck), but a socket silent for
 * 2 minutes fails, so a stalled connection still ends. The silence counts while a download waits
 * on its reader too (the batch intake pauses the stream while it sends lines on), hence minutes.
 */
export const S3_TIMEOUTS = { connectionTimeout: 3_000, socketTimeout: 120_000 } as const;

/** SageMaker ends a real-time invocation the container has not answered within 60 s. */
const SAGEMAKER_INVOCATION_LIMIT_MS = 60_000;

/**
 * SageMaker runtime: each call carries its own abort signal (the endpoint clients' per-call
 * timeout, 50 s, 55 s serverless), which is what bounds an invocation. The request timeout only
 * catches a connection nothing else ends, so it sits above SageMaker's own 60 s limit: below the
 * time a batched call takes (ten fresh items, about 15 s) it would cut every full batch short,
 * as older SDK releases did with a 10 s request timeout applied as a socket idle timeout.
 */
export const ENDPOINT_TIMEOUTS = {
  connectionTimeout: 3_000,
  requestTimeout: SAGEMAKER_INVOCATION_LIMIT_MS + 5_000,
  throwOnRequestTimeout: true,
} as const;

/** Where and as whom the clients connect; everything optional (the SDK's own chain otherwise). */
export interface AwsClientOptions {
  readonly region?: string;
  /** An explicit endpoint (a local stand-in); the `AWS_ENDPOINT_URL_*` variables apply otherwise. */
  readonly endpoint?: string;
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/** The services whose endpoint an environment may move, by the suffix of their variable. */
export type AwsService =
  | "DYNAMODB"
  | "SQS"
  | "EVENTBRIDGE"
  | "SAGEMAKER_RUNTIME"
  | "SAGEMAKER"
  | "LAMBDA"
  | "S3";

/**
 * A client's options read from `env` as the SDK reads the process environment: the endpoint
 * from `AWS_ENDPOINT_URL_<SERVICE>` (else `AWS_ENDPOINT_URL`), the region from `AWS_REGION`,
 * the credentials from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`.
 * Whatever `env` leaves unset is left to the SDK's chain (in Lambda: the same variables).
 */
export function awsOptionsFromEnv(env: NodeJS.ProcessEnv, service: AwsService): AwsClientOptions {
  const endpoint = env[`AWS_ENDPOINT_URL_${service}`] || env.AWS_ENDPOINT_URL;
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return {
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  };
}

/** Options for a stand-in on this machine: a fixed region and throwaway credentials. */
export function localServiceOptions(endpoint: string): AwsClientOptions {
  return { endpoint, region: "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } };
}

type Timeouts = typeof SDK_REQUEST_TIMEOUTS | typeof S3_TIMEOUTS | typeof ENDPOINT_TIMEOUTS;

function config(options: AwsClientOptions, timeouts: Timeouts = SDK_REQUEST_TIMEOUTS) {
  return {
    requestHandler: timeouts,
    ...(options.region ? { region: options.region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  };
}

/** A DynamoDB client (table administration). */
export function dynamoDbClient(options: AwsClientOptions = {}): DynamoDBClient {
  return new DynamoDBClient(config(options));
}

/** A DynamoDB document client that drops undefined attributes, over `base` or a new client. */
export function documentClient(
  options: AwsClientOptions = {},
  base: DynamoDBClient = dynamoDbClient(options),
): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
}

/** An SQS client. */
export function sqsClient(options: AwsClientOptions = {}): SQSClient {
  return new SQSClient(config(options));
}

/** An EventBridge client. */
export function eventBridgeClient(options: AwsClientOptions = {}): EventBridgeClient {
  return new EventBridgeClient(config(options));
}

/** A SageMaker runtime client that tries once: the decide path has its own retry loop and deadline. */
export function sageMakerRuntimeClient(options: AwsClientOptions = {}): SageMakerRuntimeClient {
  return new SageMakerRuntimeClient({ ...config(options, ENDPOINT_TIMEOUTS), maxAttempts: 1 });
}

/** A SageMaker (control plane) client: the capacity follower describes the endpoint with it. */
export function sageMakerClient(options: AwsClientOptions = {}): SageMakerClient {
  return new SageMakerClient(config(options));
}

/** A Lambda client: the capacity follower sets the intake mapping's concurrency with it. */
export function lambdaClient(options: AwsClientOptions = {}): LambdaClient {
  return new LambdaClient(config(options));
}

/**
 * An S3 client; path-style addressing when an endpoint is given (local stand-ins such as moto
 * serve buckets by path, not by subdomain).
 */
export function s3Client(options: AwsClientOptions = {}): S3Client {
  return new S3Client({
    ...config(options, S3_TIMEOUTS),
    ...(options.endpoint ? { forcePathStyle: true } : {}),
  });
}
