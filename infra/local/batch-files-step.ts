/**
 * The batch lane's queues in the local mode, as deployed: the batch items' queue (the intake's
 * dead-letter queue, so a replay brings its items back too; fewer pollers than the intake, so a
 * large batch cannot take every worker), and the batch files step's own queue (dead-lettered after
 * the receive limit) with one poller running the batch files function, so a batch's results and
 * errors files are written by their own step here too, never by the decide function.
 */
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { BATCH_FILES } from "../../shared/domain/topology.ts";
import { type SqsPoller, startSqsPoller } from "./sqs-poller.ts";

/** The queue's name, and its dead-letter queue's. */
const NAME = "batch-files";

/** Creates the batch items' queue, and the files step's queue with its dead-letter queue. */
export async function createBatchQueues(
  createQueue: (name: string, attributes?: Record<string, string>) => Promise<SqsQueue>,
  accountArn: string,
  queue: { readonly visibilitySeconds: number; readonly maxReceiveCount: number },
): Promise<{ batch: SqsQueue; files: SqsQueue }> {
  const redrive = (deadLetters: string) => ({
    VisibilityTimeout: String(queue.visibilitySeconds),
    RedrivePolicy: JSON.stringify({
      maxReceiveCount: queue.maxReceiveCount,
      deadLetterTargetArn: `${accountArn}:${deadLetters}`,
    }),
  });
  const batch = await createQueue("batch", redrive("intake-dlq"));
  await createQueue(`${NAME}-dlq`);
  return { batch, files: await createQueue(NAME, redrive(`${NAME}-dlq`)) };
}

/** Starts the poller that runs the batch files function (import it once the environment is set). */
export async function startBatchFilesPoller(queue: SqsQueue, accountArn: string): Promise<SqsPoller> {
  const { batchFilesDependenciesFromEnv, createBatchFilesHandler } = await import(
    "../../functions/batch-files.ts"
  );
  const dependencies = batchFilesDependenciesFromEnv();
  return startSqsPoller({
    queue,
    queueArn: `${accountArn}:${NAME}`,
    handler: createBatchFilesHandler(() => dependencies),
    batchSize: BATCH_FILES.batchSize,
    functionName: NAME,
  });
}
