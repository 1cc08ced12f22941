/**
 * The Lambda functions' AWS SDK clients, built from the environment they are given (the
 * process environment in Lambda, the local mode's own elsewhere) and wrapped by the tracer, so
 * X-Ray shows their calls. One client of each kind per environment object, made on first use.
 */
import * as factories from "../../shared/adapters/aws-clients.ts";
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

/**
 * A getter of one kind of client: made by `make` on first use for an environment object, the same
 * one after (the one place the memo is written).
 */
function memoised<K extends keyof Clients>(
  kind: K,
  make: (env: NodeJS.ProcessEnv) => NonNullable<Clients[K]>,
) {
  return (env: NodeJS.ProcessEnv = process.env): NonNullable<Clients[K]> => {
    const clients = clientsOf(env);
    const known = clients[kind];
    if (known) return known as NonNullable<Clients[K]>;
    const made = make(env);
    clients[kind] = made;
    return made;
  };
}

const traced = tracer.captureAWSv3Client.bind(tracer);
const options = factories.awsOptionsFromEnv;

/** The DynamoDB document client (undefined attributes dropped). */
export const dynamoClient = memoised("dynamo", (env) =>
  factories.documentClient({}, traced(factories.dynamoDbClient(options(env, "DYNAMODB")))),
);

/** The EventBridge client. */
export const eventBridgeClient = memoised("events", (env) =>
  traced(factories.eventBridgeClient(options(env, "EVENTBRIDGE"))),
);

/** The SageMaker runtime client; our own retry loop handles retries, so the SDK tries once. */
export const sagemakerClient = memoised("sagemaker", (env) =>
  traced(factories.sageMakerRuntimeClient(options(env, "SAGEMAKER_RUNTIME"))),
);

/** The SageMaker control-plane client (the capacity follower's DescribeEndpoint). */
export const sagemakerControlClient = memoised("sagemakerControl", (env) =>
  traced(factories.sageMakerClient(options(env, "SAGEMAKER"))),
);

/** The Lambda client (the capacity follower's event source mapping updates). */
export const lambdaClient = memoised("lambda", (env) =>
  traced(factories.lambdaClient(options(env, "LAMBDA"))),
);

/** The SQS client. */
export const sqsClient = memoised("sqs", (env) => traced(factories.sqsClient(options(env, "SQS"))));

/** The S3 client. */
export const s3Client = memoised("s3", (env) => traced(factories.s3Client(options(env, "S3"))));

/** Closes the clients made for `env` (the local mode's stop; Lambda never needs it). */
export function destroyClients(env: NodeJS.ProcessEnv): void {
  const clients = byEnvironment.get(env);
  if (!clients) return;
  for (const client of Object.values(clients)) client?.destroy();
  byEnvironment.delete(env);
}
