/**
 * The batch files function: consumes the batch files queue, on which a batch's completion (and
 * each later change, delayed) asks for its files. It streams the batch's members from the table
 * into the results and errors files (a multipart upload: memory bounded by one page of members
 * and one part, whatever the batch's size) and announces "Batch Completed" and "Batch Reviewed"
 * when they are due (`shared/use-cases/batch-files.ts`). A run that fails returns its message to
 * the queue; after the receive limit it goes to the queue's dead-letter queue.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { SQSRecord } from "aws-lambda";
import { METRICS } from "../shared/domain/topology.ts";
import {
  type BatchFilesDependencies,
  batchIdOfRequest,
  writeBatchFiles,
} from "../shared/use-cases/batch-files.ts";
import { batchJobFromEnv } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { sqsBatchHandler } from "./support/sqs-batch-handler.ts";

const logger = new Logger({ serviceName: METRICS.service.batchFiles });
const metrics = new Metrics({
  namespace: METRICS.namespace,
  serviceName: METRICS.service.batchFiles,
  logger,
});

/** The step's dependencies, from the environment. */
export async function batchFilesDependenciesFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<BatchFilesDependencies> {
  const { shared, batches, objects } = await batchJobFromEnv(env);
  return {
    ...batches,
    objects,
    decisions: shared.store,
    policies: shared.policies,
    publisher: shared.publisher,
  };
}

/** The handler for given dependencies (the local mode builds its own). */
export function createBatchFilesHandler(dependencies: () => Promise<BatchFilesDependencies>) {
  const resolved = lazy(dependencies);
  async function recordHandler(record: SQSRecord): Promise<void> {
    const batchId = batchIdOfRequest(record.body);
    const outcome = await writeBatchFiles(await resolved(), batchId);
    metrics.addMetric(`batch_files_${outcome}`, MetricUnit.Count, 1);
    logger.info("batch files", { batchId, outcome });
  }
  return sqsBatchHandler(recordHandler, { logger, metrics });
}

/** The Lambda entry point. */
export const handler = createBatchFilesHandler(() => batchFilesDependenciesFromEnv());
