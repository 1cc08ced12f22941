/**
 * The batch files step in the local mode, as deployed: one poller running the batch files
 * function on its own queue (`local-queues.ts` creates it, dead-lettered after the receive limit),
 * so a batch's results and errors files are written by their own step here too, never by the
 * decide function.
 */
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { EVENT_SOURCE_MAPPINGS } from "../../shared/domain/topology/event-source-mapping.ts";
import { type SqsPoller, startSqsPoller } from "./sqs/sqs-poller.ts";

/** The queue's name (`local-queues.ts` creates it). */
const NAME = "batch-files";

/** Starts the poller that runs the batch files function with the local mode's environment `env`. */
export async function startBatchFilesPoller(
  queue: SqsQueue,
  accountArn: string,
  env: NodeJS.ProcessEnv,
): Promise<SqsPoller> {
  const { batchFilesDependenciesFromEnv, createBatchFilesHandler } = await import(
    "../../functions/batch-files.ts"
  );
  const dependencies = batchFilesDependenciesFromEnv(env);
  return startSqsPoller({
    queue,
    queueArn: `${accountArn}:${NAME}`,
    handler: createBatchFilesHandler(() => dependencies),
    mapping: EVENT_SOURCE_MAPPINGS.batchFiles,
    functionName: NAME,
  });
}
