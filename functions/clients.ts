/**
 * The Lambda functions' AWS SDK clients, built from the environment they are given (the
 * process environment in Lambda, the local mode's own elsewhere) and wrapped by the tracer, so
 * X-Ray shows their calls. One client of each kind per environment object, made on first use.
 */
import * as factories from "../shared/adapters/aws-clients.ts";
import { tracer } from "./tracing.ts";

type Clients = {
  dynamo?: ReturnType<typeof factories.documentClient>;
  events?: ReturnType<typeof factories.eventBridgeClient>;
  sagemaker?: ReturnType<typeof factories.sageMakerRuntimeClient>;
  sagemakerControl?: ReturnType<typeof factories.sageMakerClient>;
  lambda?: ReturnType<typeof factories.lambdaClient>;
  sqs?: ReturnType<typeof factories.sqsClient>;
  s3?: ReturnType<typeof factories.s3Client>;
};

// Keyed by the environment object: the same environment shares its clients (and their sockets).
const byEnvironment = new WeakMap<NodeJS.ProcessEnv, Clients>();

function clientsOf(env: NodeJS.ProcessEnv): Clients {
  const known = byEnvironment.get(env);
  if (known) return known;
  const clients: Clients = {};
  byEnvironment.set(env, clients);
  return clients;
}

/** The DynamoDB document client (undefined attributes dropped). */
export function dynamoClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.dynamo ??= factories.documentClient(
    {},
    tracer.captureAWSv3Client(factories.dynamoDbClient(factories.awsOptionsFromEnv(env, "DYNAMODB"))),
  );
  return clients.dynamo;
}

/** The EventBridge client. */
export function eventBridgeClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.events ??= tracer.captureAWSv3Client(
    factories.eventBridgeClient(factories.awsOptionsFromEnv(env, "EVENTBRIDGE")),
  );
  return clients.events;
}

/** The SageMaker runtime client; our own retry loop handles retries, so the SDK tries once. */
export function sagemakerClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.sagemaker ??= tracer.captureAWSv3Client(
    factories.sageMakerRuntimeClient(factories.awsOptionsFromEnv(env, "SAGEMAKER_RUNTIME")),
  );
  return clients.sagemaker;
}

/** The SageMaker control-plane client (the capacity follower's DescribeEndpoint). */
export function sagemakerControlClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.sagemakerControl ??= tracer.captureAWSv3Client(
    factories.sageMakerClient(factories.awsOptionsFromEnv(env, "SAGEMAKER")),
  );
  return clients.sagemakerControl;
}

/** The Lambda client (the capacity follower's event source mapping updates). */
export function lambdaClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.lambda ??= tracer.captureAWSv3Client(
    factories.lambdaClient(factories.awsOptionsFromEnv(env, "LAMBDA")),
  );
  return clients.lambda;
}

/** The SQS client. */
export function sqsClient(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.sqs ??= tracer.captureAWSv3Client(factories.sqsClient(factories.awsOptionsFromEnv(env, "SQS")));
  return clients.sqs;
}

/** The S3 client. */
export function s3Client(env: NodeJS.ProcessEnv = process.env) {
  const clients = clientsOf(env);
  clients.s3 ??= tracer.captureAWSv3Client(factories.s3Client(factories.awsOptionsFromEnv(env, "S3")));
  return clients.s3;
}

/** Closes the clients made for `env` (the local mode's stop; Lambda never needs it). */
export function destroyClients(env: NodeJS.ProcessEnv): void {
  const clients = byEnvironment.get(env);
  if (!clients) return;
  for (const client of Object.values(clients)) client?.destroy();
  byEnvironment.delete(env);
}
