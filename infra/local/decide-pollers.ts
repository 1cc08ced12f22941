/**
 * The local decide function's pollers: on the intake (a group the capacity follower resizes), on
 * the batch queue when the real-time lane serves batches, and the batch files step's.
 */
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import {
  decideBatchMapping,
  decideIntakeMapping,
  type EventSourceMapping,
} from "../../shared/domain/topology/event-source-mapping.ts";
import { BATCH_LANE, DECIDE_FUNCTION } from "../../shared/domain/topology.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";
import { startBatchFilesPoller } from "./batch-files-step.ts";
import { LOCAL_ARN, type LocalQueues } from "./local-queues.ts";
import { PollerGroup } from "./poller-group.ts";
import { startSqsPoller } from "./sqs/sqs-poller.ts";

/** The wiring's options the pollers read. */
export interface DecidePollerOptions {
  /** Intake pollers at start (Lambda concurrency). @default 1 */
  readonly decidePollers?: number;
  /** Records per decide invocation (both lanes). @default DECIDE_FUNCTION.batchSize */
  readonly decideBatchSize?: number;
  /** Pollers on the batch queue (the real-time batch lane only). @default BATCH_LANE.maxConcurrency */
  readonly batchPollers?: number;
  /** The batch lane: only "realtime" puts decide pollers on the batch queue. */
  readonly batchLane?: "async" | "realtime";
}

/**
 * The decide function's pollers on the intake and the batch lane, and the batch files step's.
 * One handler per poller, as Lambda runs one invocation per execution environment at a time (the
 * Powertools batch processor keeps per-invocation state); the pollers of a queue count its
 * receives together (`sqs-poller.ts`).
 */
export async function startDecidePollers(
  options: DecidePollerOptions,
  queues: LocalQueues,
  pollerDeps: () => DecideDependencies,
  env: NodeJS.ProcessEnv,
) {
  const { createDecideHandler, deliveriesFromEnv } = await import("../../functions/decide.ts");
  const pollersOn = (queue: SqsQueue, name: string, mapping: EventSourceMapping, count: number) => {
    return Array.from({ length: count }, () => {
      const deps = pollerDeps();
      return startSqsPoller({
        queue,
        queueArn: `${LOCAL_ARN}:${name}`,
        handler: createDecideHandler(
          async () => deps,
          () => deliveriesFromEnv(env),
          () => `${LOCAL_ARN}:batch`,
        ),
        mapping,
        functionName: name === "intake" ? "decide" : "decide-batch",
      });
    });
  };
  const batchSize = options.decideBatchSize ?? DECIDE_FUNCTION.batchSize;
  // The intake's pollers are a group the capacity follower may resize, as it sets the mapping's concurrency.
  const intakePollers = options.decidePollers ?? 1;
  const intakeMapping = decideIntakeMapping({ batchSize, intake: intakePollers });
  const intake = new PollerGroup(
    () => pollersOn(queues.intake, "intake", intakeMapping, 1)[0]!,
    intakePollers,
  );
  // On the async lane the submit function consumes the batch queue (`async-lane.ts`).
  const batchMapping = decideBatchMapping({
    batchSize,
    batch: options.batchPollers ?? BATCH_LANE.maxConcurrency,
  });
  const batch =
    queues.batch && options.batchLane === "realtime"
      ? pollersOn(queues.batch, "batch", batchMapping, batchMapping.maxConcurrency ?? 1)
      : [];
  const files = queues.batchFiles ? [await startBatchFilesPoller(queues.batchFiles, LOCAL_ARN, env)] : [];
  const stop = () => Promise.all([intake.stop(), ...[...batch, ...files].map((poller) => poller.stop())]);
  return { all: { decide: intake.pollers, batch, files }, intake, stop };
}
