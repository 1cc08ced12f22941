/**
 * The composition every SQS-fed function shares: Powertools batch processing with partial
 * failures (only the records that threw come back), wrapped by middy with the tracer, the
 * logger's Lambda context and the metrics flush.
 */
import { BatchProcessor, EventType, processPartialResponse } from "@aws-lambda-powertools/batch";
import type { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { Metrics } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { tracer } from "./tracing.ts";

/**
 * A Lambda handler for SQS batches that handles each record with `recordHandler`.
 * `throwOnFullBatchFailure` (default true): whether a batch whose every record failed fails the
 * invocation, or only reports them all. `onBatch` (default none) sees each invocation's records
 * before they are handled.
 */
export function sqsBatchHandler(
  recordHandler: (record: SQSRecord) => Promise<void>,
  observability: { logger: Logger; metrics: Metrics },
  options: { throwOnFullBatchFailure?: boolean; onBatch?: (records: readonly SQSRecord[]) => void } = {},
) {
  // One processor per handler: it keeps per-invocation state, as one Lambda environment does.
  const processor = new BatchProcessor(EventType.SQS);
  async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    options.onBatch?.(event.Records);
    return processPartialResponse(event, recordHandler, processor, {
      context,
      throwOnFullBatchFailure: options.throwOnFullBatchFailure ?? true,
    });
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(observability.logger))
    .use(logMetrics(observability.metrics));
}
