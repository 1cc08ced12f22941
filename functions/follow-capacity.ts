/**
 * The capacity follower, run every minute and on each of the endpoint's deployment state changes:
 * sets the intake mapping's `MaximumConcurrency` to what the instances in service admit (the
 * pollers follow the fleet that runs, not the scaling maximum), records the reading the decide
 * function's overload backoff starts from, and publishes the backlog per instance that the
 * endpoint's scaling tracks, the instances in service (the scale-in guard), the expected wait,
 * the intake's concurrency and whether a deployment's new fleet bakes (the rollback alarms).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { DynamoDbFleetReadings } from "../shared/adapters/dynamodb/dynamodb-fleet-readings.ts";
import { LambdaMappingConcurrency } from "../shared/adapters/lambda-mapping.ts";
import { SageMakerFleet } from "../shared/adapters/sagemaker-fleet.ts";
import { SqsQueue } from "../shared/adapters/sqs-queue.ts";
import { systemClock } from "../shared/domain/clock.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { CAPACITY_FOLLOWER, METRICS } from "../shared/domain/topology.ts";
import { type FollowCapacityDependencies, followCapacity } from "../shared/use-cases/follow-capacity.ts";
import { dynamoClient, lambdaClient, sagemakerControlClient, sqsClient } from "./support/clients.ts";
import { positiveNumber, requireEnv } from "./support/config.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: METRICS.service.capacityFollower });

/** The follower's dependencies from the environment. */
export function followerFromEnv(env: NodeJS.ProcessEnv = process.env): FollowCapacityDependencies {
  return {
    fleet: new SageMakerFleet(
      sagemakerControlClient(env),
      requireEnv(FUNCTION_ENV.FOLLOWED_ENDPOINT_NAME, env),
    ),
    intake: new SqsQueue(sqsClient(env), requireEnv(FUNCTION_ENV.INTAKE_QUEUE_URL, env)),
    mapping: new LambdaMappingConcurrency(
      lambdaClient(env),
      requireEnv(FUNCTION_ENV.INTAKE_MAPPING_UUID, env),
    ),
    readings: new DynamoDbFleetReadings(dynamoClient(env), requireEnv(FUNCTION_ENV.DECISIONS_TABLE, env)),
    secondsPerItem: positiveNumber(FUNCTION_ENV.SECONDS_PER_ITEM, undefined, env),
    concurrencyPerInstance: positiveNumber(
      FUNCTION_ENV.CONCURRENCY_PER_INSTANCE,
      CAPACITY_FOLLOWER.concurrencyPerInstance,
      env,
    ),
    now: systemClock,
  };
}

/** The handler for given dependencies. */
export function createFollowCapacityHandler(
  dependencies: () => Promise<FollowCapacityDependencies>,
  metrics = new Metrics({
    namespace: METRICS.namespace,
    serviceName: METRICS.service.capacityFollower,
    logger,
  }),
) {
  const resolved = lazy(dependencies);
  async function lambdaHandler(): Promise<unknown> {
    const followed = await followCapacity(await resolved());
    const names = METRICS.follower;
    metrics.addMetric(names.backlogPerInstance, MetricUnit.Count, followed.backlogPerInstance);
    metrics.addMetric(names.instancesInService, MetricUnit.Count, followed.reading.instances);
    metrics.addMetric(names.expectedWaitSeconds, MetricUnit.Seconds, followed.expectedWaitSeconds);
    metrics.addMetric(names.intakeConcurrency, MetricUnit.Count, followed.concurrency);
    metrics.addMetric(names.deploymentBaking, MetricUnit.Count, followed.baking ? 1 : 0);
    if (followed.concurrency !== followed.previousConcurrency)
      logger.info("intake concurrency follows the instances in service", {
        from: followed.previousConcurrency,
        to: followed.concurrency,
        instances: followed.reading.instances,
      });
    return followed;
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));
}

/** The Lambda entry point. */
export const handler = createFollowCapacityHandler(async () => followerFromEnv());
