/**
 * AWS SDK clients, created once per process and shared by the handlers. Each honours the
 * `AWS_ENDPOINT_URL_*` variables, which is how the local mode and the tests point unchanged
 * handler code at the stand-ins. Each is wrapped by the tracer, so X-Ray shows its calls.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { tracer } from "./tracing.ts";

/**
 * Every call gets an answer or an error: the SDK waits forever on a connection that never
 * answers unless told otherwise. A timed-out call is retried by the SDK (3 tries), then fails
 * like any other transient error. (SageMaker calls carry their own per-call abort signal.)
 */
export const SDK_REQUEST_TIMEOUTS = { connectionTimeout: 3_000, requestTimeout: 10_000 } as const;

let dynamo: DynamoDBDocumentClient | undefined;
let events: EventBridgeClient | undefined;
let sagemaker: SageMakerRuntimeClient | undefined;
let sqs: SQSClient | undefined;

/** The DynamoDB document client (undefined attributes dropped). */
export function dynamoClient(): DynamoDBDocumentClient {
  dynamo ??= DynamoDBDocumentClient.from(
    tracer.captureAWSv3Client(new DynamoDBClient({ requestHandler: SDK_REQUEST_TIMEOUTS })),
    {
      marshallOptions: { removeUndefinedValues: true },
    },
  );
  return dynamo;
}

/** The EventBridge client. */
export function eventBridgeClient(): EventBridgeClient {
  events ??= tracer.captureAWSv3Client(new EventBridgeClient({ requestHandler: SDK_REQUEST_TIMEOUTS }));
  return events;
}

/** The SageMaker runtime client; our own retry loop handles retries, so the SDK tries once. */
export function sagemakerClient(): SageMakerRuntimeClient {
  sagemaker ??= tracer.captureAWSv3Client(new SageMakerRuntimeClient({ maxAttempts: 1 }));
  return sagemaker;
}

/** The SQS client. */
export function sqsClient(): SQSClient {
  sqs ??= tracer.captureAWSv3Client(new SQSClient({ requestHandler: SDK_REQUEST_TIMEOUTS }));
  return sqs;
}
