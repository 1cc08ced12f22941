/**
 * The decide function: SQS-triggered, batch with partial failures. Each record is decided by
 * `decideMessage`; a record it could not decide is settled by `settleFailedDelivery`: one the
 * endpoint was too busy for goes back to its queue with a visibility backoff that starts at the
 * wait the fleet lets it expect (the capacity follower's reading) and grows, counting as no failure; a failing one is counted and reported back, and dead-lettered here at its limit.
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { SQSRecord } from "aws-lambda";
import { BatchingDecisionEndpoint } from "../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../shared/adapters/decision-endpoint.ts";
import { DynamoDbFleetReadings } from "../shared/adapters/dynamodb/dynamodb-fleet-readings.ts";
import { EndpointsByModel, parseTierEndpoints } from "../shared/adapters/endpoints-by-model.ts";
import { SqsQueueDirectory } from "../shared/adapters/sqs-queue-directory.ts";
import { systemClock } from "../shared/domain/clock.ts";
import { EndpointUnavailableError } from "../shared/domain/errors.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { METRICS } from "../shared/domain/topology.ts";
import { type DecideDependencies, decideMessage } from "../shared/use-cases/decide-message.ts";
import { expectedWaitFrom } from "../shared/use-cases/expected-wait.ts";
import {
  type Delivery,
  type FailedDeliveryDependencies,
  failureReason,
  settleFailedDelivery,
} from "../shared/use-cases/failed-delivery.ts";
import { emitOldestItemAges } from "./item-age.ts";
import { dynamoClient, sagemakerClient, sqsClient } from "./support/clients.ts";
import { decideSettings, deliverySettings } from "./support/config.ts";
import { batchDependenciesFromEnv, sharedDependencies } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { sqsBatchHandler } from "./support/sqs-batch-handler.ts";

const logger = new Logger({ serviceName: METRICS.service.decide });
// Metrics warnings (such as an empty flush) go through the logger, so its level governs them.
const metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service.decide, logger });

/**
 * The decision endpoint client from the environment. A Lambda execution environment runs one
 * invocation at a time, so its client batches only that invocation's records; the local mode
 * builds one per poller for the same reason.
 */
export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env): DecideDependencies["endpoint"] {
  const settings = decideSettings(env);
  const first = endpointClient(settings.endpointName, env);
  // Which endpoint answers for each later-tier model; unset, the first serves every name.
  const tiers = parseTierEndpoints(env[FUNCTION_ENV.TIER_ENDPOINTS]);
  if (tiers === undefined) return first;
  // One client per endpoint: the first's own models share its client.
  const clients = new Map([[settings.endpointName, first]]);
  const byModel = new Map(
    [...tiers].map(([model, name]) => {
      if (!clients.has(name)) clients.set(name, endpointClient(name, env));
      return [model, clients.get(name)!] as const;
    }),
  );
  return new EndpointsByModel(first, byModel);
}

/** The client of one endpoint, batching when the settings say so. */
function endpointClient(endpointName: string, env: NodeJS.ProcessEnv): DecideDependencies["endpoint"] {
  const settings = decideSettings(env);
  const calls = {
    timeoutMs: settings.endpointTimeoutMs,
    attempts: settings.endpointAttempts,
    baseDelayMs: settings.endpointBaseDelayMs,
  };
  // The records of one SQS batch go to the endpoint in one call (grouped there by policy).
  return settings.endpointBatchItems > 1
    ? new BatchingDecisionEndpoint(sagemakerClient(env), endpointName, {
        ...calls,
        maxItems: settings.endpointBatchItems,
        windowMs: settings.endpointBatchWindowMs,
        maxBodyBytes: settings.endpointBatchBodyBytes,
      })
    : new SageMakerDecisionEndpoint(sagemakerClient(env), endpointName, calls);
}

/** Builds the dependencies from the environment (once per container). */
export async function dependenciesFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<DecideDependencies> {
  const settings = decideSettings(env);
  const shared = await sharedDependencies(env);
  const batches = batchDependenciesFromEnv(env);
  return {
    ...shared,
    ...(batches ? { batches } : {}),
    endpoint: endpointFromEnv(env),
    publishLeaseMs: settings.publishLeaseMs,
  };
}

/** What the handler needs to settle a failed delivery, besides the store and batches. */
export type DeliveryDependencies = Pick<
  FailedDeliveryDependencies,
  "queues" | "limits" | "draw" | "expectedWait"
>;

/**
 * The queues by ARN on SQS, the limits from the environment, and the expected wait from the
 * capacity follower's reading in the decisions table.
 */
export function deliveriesFromEnv(env: NodeJS.ProcessEnv = process.env): DeliveryDependencies {
  // The table is the store's too (required there); without one the fixed schedule applies.
  const table = env[FUNCTION_ENV.DECISIONS_TABLE];
  return {
    queues: new SqsQueueDirectory(sqsClient(env)),
    limits: deliverySettings(env),
    ...(table
      ? { expectedWait: expectedWaitFrom(new DynamoDbFleetReadings(dynamoClient(env), table), systemClock) }
      : {}),
  };
}

/** A record as the failed-delivery use case reads it. */
function deliveryOf(record: SQSRecord): Delivery {
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
    sourceArn: record.eventSourceARN,
  };
}

/**
 * The handler for given dependencies (tests and the local mode build their own). `batchQueueArn`
 * names the batch lane's queue, which tells the lanes apart in the oldest item's age.
 * @default batchQueueArn the BATCH_QUEUE_ARN variable (the CDK app sets it where the lane exists)
 */
export function createDecideHandler(
  dependencies: () => Promise<DecideDependencies>,
  deliveries: () => DeliveryDependencies = () => deliveriesFromEnv(),
  batchQueueArn: () => string | undefined = () => process.env[FUNCTION_ENV.BATCH_QUEUE_ARN],
) {
  const resolved = lazy(dependencies);
  let settling: DeliveryDependencies | undefined;
  async function recordHandler(record: SQSRecord): Promise<void> {
    const deps = await resolved();
    let result: Awaited<ReturnType<typeof decideMessage>>;
    try {
      result = await decideMessage(record.body, deps);
    } catch (error) {
      settling ??= deliveries();
      const delivery = deliveryOf(record);
      const failed = await settleFailedDelivery(delivery, error, {
        ...settling,
        store: deps.store,
        ...(deps.batches ? { batches: deps.batches } : {}),
      }).catch((cause: unknown) => {
        // Nothing settled (the store or SQS unreachable): it comes back after the visibility timeout.
        logger.warn("could not settle a failed delivery", {
          messageId: record.messageId,
          cause: String(cause),
        });
        return undefined;
      });
      metrics.addMetric(`items_${failed?.outcome ?? "retrying"}`, MetricUnit.Count, 1);
      // A failing model or container, told apart from the endpoint's deliberate busy answers
      // (those are EndpointOverloadedError): the endpoint alarm and the deployment rollback read it.
      if (error instanceof EndpointUnavailableError)
        metrics.addMetric(METRICS.endpointFailures, MetricUnit.Count, 1);
      logger.debug("record not decided", {
        messageId: record.messageId,
        error: failureReason(error),
        ...failed,
      });
      // Dead-lettered: done with here, so the mapping deletes it; otherwise reported back.
      if (failed?.outcome === "dead_lettered") return;
      throw error;
    }
    metrics.addMetric(`items_${result.outcome}`, MetricUnit.Count, 1);
    // routed_auto and routed_human give the escalation rate the operations alarm watches.
    if (result.route) metrics.addMetric(`routed_${result.route}`, MetricUnit.Count, 1);
    logger.debug("record processed", { messageId: record.messageId, ...result });
  }
  // An invocation whose every item waits out an overload is no function error.
  return sqsBatchHandler(
    recordHandler,
    { logger, metrics },
    {
      throwOnFullBatchFailure: false,
      onBatch: (records) => emitOldestItemAges(metrics, records, batchQueueArn()),
    },
  );
}

/** The Lambda entry point. */
export const handler = createDecideHandler(() => dependenciesFromEnv());
