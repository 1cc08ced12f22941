/**
 * The decide function: SQS-triggered, batch with partial failures. Each record is decided by
 * `decideMessage`; only transient failures are reported back, so SQS redelivers just those (and
 * moves them to the dead-letter queue after the receive limit).
 */

import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { SQSRecord } from "aws-lambda";
import { BatchingDecisionEndpoint } from "../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../shared/adapters/decision-endpoint.ts";
import { MAX_RECEIVE_COUNT, METRICS } from "../shared/domain/topology.ts";
import { settleDeadLetter } from "../shared/use-cases/batch-progress.ts";
import { batchOf, type DecideDependencies, decideMessage } from "../shared/use-cases/decide-message.ts";
import { sagemakerClient } from "./clients.ts";
import { decideSettings, positiveInteger } from "./config.ts";
import { batchDependenciesFromEnv, sharedDependencies } from "./dependencies.ts";
import { sqsBatchHandler } from "./sqs-batch-handler.ts";

const logger = new Logger({ serviceName: METRICS.service.decide });
// Metrics warnings (such as an empty flush) go through the logger, so its level governs them.
const metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service.decide, logger });

/** Builds the dependencies from the environment (once per container). */
export async function dependenciesFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<DecideDependencies> {
  const settings = decideSettings(env);
  const shared = await sharedDependencies(env);
  const batches = batchDependenciesFromEnv(env);
  return {
    ...shared,
    ...(batches ? { batches } : {}),
    // The records of one SQS batch go to the endpoint in one call (grouped there by policy).
    endpoint:
      settings.endpointBatchItems > 1
        ? new BatchingDecisionEndpoint(sagemakerClient(), settings.endpointName, {
            timeoutMs: settings.endpointTimeoutMs,
            attempts: settings.endpointAttempts,
            maxItems: settings.endpointBatchItems,
            windowMs: settings.endpointBatchWindowMs,
          })
        : new SageMakerDecisionEndpoint(sagemakerClient(), settings.endpointName, {
            timeoutMs: settings.endpointTimeoutMs,
            attempts: settings.endpointAttempts,
          }),
    publishLeaseMs: settings.publishLeaseMs,
  };
}

/** The handler for given dependencies (tests and the local mode build their own). */
export function createDecideHandler(dependencies: () => Promise<DecideDependencies>) {
  let resolved: Promise<DecideDependencies> | undefined;
  const maxReceiveCount = positiveInteger("MAX_RECEIVE_COUNT", MAX_RECEIVE_COUNT);
  async function recordHandler(record: SQSRecord): Promise<void> {
    resolved ??= dependencies();
    const deps = await resolved;
    let result: Awaited<ReturnType<typeof decideMessage>>;
    try {
      result = await decideMessage(record.body, deps);
    } catch (error) {
      // Noted for replay's reason filter; SQS keeps the message id when it dead-letters it.
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      await deps.store.noteFailure(record.messageId, reason).catch(() => undefined);
      // The last receive: SQS moves the message to the dead-letter queue next, and its batch
      // counts it there (a replay that decides it later moves it to decided).
      const receives = Number(record.attributes?.ApproximateReceiveCount ?? 0);
      const batchId = batchOf(record.body);
      if (deps.batches && batchId && receives >= maxReceiveCount) {
        await settleDeadLetter(deps.batches, batchId, record.body, reason).catch((cause: unknown) =>
          logger.warn("could not count the dead letter in its batch", { batchId, cause: String(cause) }),
        );
      }
      throw error;
    }
    metrics.addMetric(`items_${result.outcome}`, MetricUnit.Count, 1);
    // routed_auto and routed_human give the escalation rate the operations alarm watches.
    if (result.route) metrics.addMetric(`routed_${result.route}`, MetricUnit.Count, 1);
    logger.debug("record processed", { messageId: record.messageId, ...result });
  }
  return sqsBatchHandler(recordHandler, { logger, metrics });
}

/** The Lambda entry point. */
export const handler = createDecideHandler(() => dependenciesFromEnv());
