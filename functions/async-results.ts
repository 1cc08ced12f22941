/**
 * The async lane's result function: fed through SQS by the async endpoint's success and error
 * notifications (SNS), one object per notification. It settles the object's items on the decide
 * path (`shared/use-cases/async/async-results.ts`): decided, rejected, failed alone, or the whole
 * object invoked again and at last dead-lettered. A cascade's later tiers are asked of the
 * real-time endpoint (DECISION_ENDPOINT_NAME, with TIER_ENDPOINTS as the decide function reads
 * them); without DECISION_ENDPOINT_NAME no later tier is asked. A notification of an invocation
 * the lane did not record, or naming another answers file, settles nothing and is logged as refused. A run that
 * fails (the table or the bus unreachable, or a notification ahead of its record) returns its
 * notification to the queue; the run that follows decides nothing twice.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { SQSRecord } from "aws-lambda";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import {
  ASYNC_LANE,
  ASYNC_METRICS,
  DECIDE_FUNCTION,
  DECIDE_QUEUES,
  METRICS,
} from "../shared/domain/topology.ts";
import { type ResultDependencies, settleNotification } from "../shared/use-cases/async/async-results.ts";
import { asyncLaneFromEnv, laneQueuesFromEnv } from "./async-settings.ts";
import { endpointFromEnv } from "./decide.ts";
import { positiveInteger } from "./support/config.ts";
import { sharedDependencies, withBatches } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { sqsBatchHandler } from "./support/sqs-batch-handler.ts";

const logger = new Logger({ serviceName: ASYNC_METRICS.service.results });
const metrics = new Metrics({
  namespace: METRICS.namespace,
  serviceName: ASYNC_METRICS.service.results,
  logger,
});

/** The result step's dependencies, from the environment. */
export async function resultDependenciesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResultDependencies> {
  const shared = await sharedDependencies(env);
  const batches = withBatches(env);
  const lane = asyncLaneFromEnv(env);
  return {
    ...lane,
    ...batches,
    decide: {
      ...shared,
      ...batches,
      publishLeaseMs: positiveInteger(FUNCTION_ENV.PUBLISH_LEASE_MS, DECIDE_FUNCTION.publishLeaseMs, env),
    },
    // A cascade's later tiers: the real-time endpoint and tier endpoints the decide function asks.
    ...(env[FUNCTION_ENV.DECISION_ENDPOINT_NAME] ? { laterTiers: endpointFromEnv(env) } : {}),
    store: shared.store,
    lanes: laneQueuesFromEnv(env),
    maxItemFailures: positiveInteger(FUNCTION_ENV.MAX_ITEM_FAILURES, DECIDE_QUEUES.maxItemFailures, env),
    objectAttempts: positiveInteger(FUNCTION_ENV.ASYNC_OBJECT_ATTEMPTS, ASYNC_LANE.objectAttempts, env),
    itemConcurrency: positiveInteger(
      FUNCTION_ENV.ASYNC_ITEM_CONCURRENCY,
      ASYNC_LANE.results.itemConcurrency,
      env,
    ),
  };
}

/** The handler for given dependencies (the local mode builds its own). */
export function createAsyncResultsHandler(dependencies: () => Promise<ResultDependencies>) {
  const resolved = lazy(dependencies);
  async function recordHandler(record: SQSRecord): Promise<void> {
    const result = await settleNotification(record.body, await resolved());
    metrics.addMetric(`async_objects_${result.outcome}`, MetricUnit.Count, 1);
    for (const [outcome, count] of Object.entries(result.items))
      if (count > 0) metrics.addMetric(`async_items_${outcome}`, MetricUnit.Count, count);
    // A notification for an invocation this lane did not make or record, or for another file: settled nothing.
    if (result.outcome === "refused") logger.warn("async notification refused", { ...result });
    else logger.info("async object", { ...result });
  }
  return sqsBatchHandler(recordHandler, { logger, metrics });
}

/** The Lambda entry point. */
export const handler = createAsyncResultsHandler(() => resultDependenciesFromEnv());
