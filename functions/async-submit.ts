/**
 * The async lane's submit function: fed by the batch lane's queue (and the intake's with
 * `-c endpointMode=async`) through an event source that gathers up to an object's worth of
 * records, it writes them as objects and calls InvokeEndpointAsync (`shared/use-cases/async/async-submit.ts`).
 * It never waits on the model. Messages of a group that could not be submitted are reported
 * back and come again; the others are deleted. Each invocation also publishes the age of each
 * lane's oldest open object (`async-open-age.ts`).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { ASYNC_LANE, ASYNC_METRICS, DECIDE_FUNCTION, METRICS } from "../shared/domain/topology.ts";
import { type SubmitDependencies, submitItems } from "../shared/use-cases/async/async-submit.ts";
import { decideMessage } from "../shared/use-cases/decide-message.ts";
import { emitOldestOpenAges, OPEN_OBJECTS_READ } from "./async-open-age.ts";
import { asyncLaneFromEnv, sourceOf } from "./async-settings.ts";
import { positiveInteger } from "./support/config.ts";
import { sharedDependencies, withBatches } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: ASYNC_METRICS.service.submit });
const metrics = new Metrics({
  namespace: METRICS.namespace,
  serviceName: ASYNC_METRICS.service.submit,
  logger,
});

/** An endpoint for the decide path that is never asked: an item that cannot be parsed needs no model. */
const NO_MODEL = {
  decide: () => Promise.reject(new Error("the submit step decides only items that need no model")),
};

/** The submit step's dependencies, from the environment. */
export async function submitDependenciesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<SubmitDependencies> {
  const shared = await sharedDependencies(env);
  const lane = asyncLaneFromEnv(env);
  const decide = {
    ...shared,
    ...withBatches(env),
    endpoint: NO_MODEL,
    publishLeaseMs: positiveInteger(FUNCTION_ENV.PUBLISH_LEASE_MS, DECIDE_FUNCTION.publishLeaseMs, env),
  };
  return {
    ...lane,
    // The hold-back: no more than the endpoint answers within the request TTL at its maximum.
    ...(env[FUNCTION_ENV.ASYNC_MAX_INSTANCES]
      ? {
          holdBack: {
            maxInstances: positiveInteger(
              FUNCTION_ENV.ASYNC_MAX_INSTANCES,
              ASYNC_LANE.defaultMaxInstances,
              env,
            ),
          },
        }
      : {}),
    policies: shared.policies,
    decideWithoutModel: (body) => decideMessage(body, decide),
    now: shared.now,
  };
}

/** The handler for given dependencies (the local mode builds its own environment). */
export function createAsyncSubmitHandler(
  dependencies: () => Promise<SubmitDependencies>,
  env: NodeJS.ProcessEnv = process.env,
) {
  const resolved = lazy(dependencies);
  let openReadFailed = false;
  async function lambdaHandler(event: SQSEvent): Promise<SQSBatchResponse> {
    const deps = await resolved();
    const queued = event.Records.map((record) => ({
      messageId: record.messageId,
      body: record.body,
      source: sourceOf(record.eventSourceARN, env),
    }));
    const result = await submitItems(queued, deps);
    metrics.addMetric(
      "async_objects_submitted",
      MetricUnit.Count,
      result.objects.filter((o) => o.invoked).length,
    );
    metrics.addMetric("async_items_submitted", MetricUnit.Count, queued.length - result.failed.length);
    // The oldest open object per lane, for its alarm; a failed read (said once per environment:
    // the table grants Query and BatchGetItem) leaves the batch's result as it is.
    await deps.records
      .open(OPEN_OBJECTS_READ)
      .then((open) => emitOldestOpenAges(metrics, open))
      .catch((error: unknown) => {
        if (!openReadFailed)
          logger.warn("open objects not read: no oldest-open-object age", { error: String(error) });
        openReadFailed = true;
      });
    if (result.holdBackUnread) logger.warn("nothing held back", { reason: result.holdBackUnread });
    if (result.failed.length > 0)
      logger.warn("items not submitted: they come back", {
        failed: result.failed.length,
        first: result.failed[0],
      });
    return { batchItemFailures: result.failed.map((f) => ({ itemIdentifier: f.messageId })) };
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));
}

/** The Lambda entry point. */
export const handler = createAsyncSubmitHandler(() => submitDependenciesFromEnv());
