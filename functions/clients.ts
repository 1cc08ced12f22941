/**
 * The Lambda functions' AWS SDK clients: created once per process from the shared factories and
 * wrapped by the tracer, so X-Ray shows their calls.
 */
import * as factories from "../shared/adapters/aws-clients.ts";
import { tracer } from "./tracing.ts";

type DynamoDBDocumentClient = ReturnType<typeof factories.documentClient>;
type EventBridgeClient = ReturnType<typeof factories.eventBridgeClient>;
type SageMakerRuntimeClient = ReturnType<typeof factories.sageMakerRuntimeClient>;
type SQSClient = ReturnType<typeof factories.sqsClient>;
type S3Client = ReturnType<typeof factories.s3Client>;

let dynamo: DynamoDBDocumentClient | undefined;
let events: EventBridgeClient | undefined;
let sagemaker: SageMakerRuntimeClient | undefined;
let sqs: SQSClient | undefined;
let s3: S3Client | undefined;

/** The DynamoDB document client (undefined attributes dropped). */
export function dynamoClient(): DynamoDBDocumentClient {
  dynamo ??= factories.documentClient({}, tracer.captureAWSv3Client(factories.dynamoDbClient()));
  return dynamo;
}

/** The EventBridge client. */
export function eventBridgeClient(): EventBridgeClient {
  events ??= tracer.captureAWSv3Client(factories.eventBridgeClient());
  return events;
}

/** The SageMaker runtime client; our own retry loop handles retries, so the SDK tries once. */
export function sagemakerClient(): SageMakerRuntimeClient {
  sagemaker ??= tracer.captureAWSv3Client(factories.sageMakerRuntimeClient());
  return sagemaker;
}

/** The SQS client. */
export function sqsClient(): SQSClient {
  sqs ??= tracer.captureAWSv3Client(factories.sqsClient());
  return sqs;
}

/** The S3 client. */
export function s3Client(): S3Client {
  s3 ??= tracer.captureAWSv3Client(factories.s3Client());
  return s3;
}
