/**
 * Batches whose intake stopped, read again. Locally `decide batch submit` is the intake function
 * (it reads the file it stored); a batch whose reader stopped half-way stays "submitting" with a
 * partial count. At start the local mode reads again every batch still submitting (and every
 * batch not completed when its queues did not survive the last run: a data folder from before
 * they were kept on disk); while it runs it looks for a batch still submitting whose intake lease
 * (`intakeUntil`, renewed as intake reads) has lapsed, as after a Ctrl-C of `batch submit`, and
 * reads that one again. Intake is a pure function of the file and the decide path never decides
 * an item twice, so reading again loses nothing and counts nothing twice.
 */
import type { BatchRecord } from "../../shared/domain/batch.ts";
import type { Clock } from "../../shared/domain/clock.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { BATCH_LANE } from "../../shared/domain/topology.ts";

/** What reading a batch again needs. */
export interface ResumeParts {
  readonly env: Record<string, string>;
  readonly shared: { policies: PolicyRegistry; now: Clock };
  readonly queues: { batch: MessageQueue; files: MessageQueue };
  readonly say: (line: string) => void;
}

/** How often the running local mode looks for a batch whose intake stopped: a sixth of the lease. */
const CHECK_MS = (BATCH_LANE.intakeLeaseSeconds * 1000) / 6;

async function intakeParts(parts: ResumeParts) {
  const { env, shared, queues } = parts;
  const { DynamoDbBatchStore } = await import("../../shared/adapters/dynamodb/dynamodb-batch-store.ts");
  const { FsObjectStore } = await import("../../shared/adapters/fs-object-store.ts");
  const { dynamoClient } = await import("../../functions/support/clients.ts");
  const { runIntake } = await import("../../shared/use-cases/batch-intake.ts");
  const { queueBatchFiles } = await import("../../shared/use-cases/batch-files.ts");
  const batches = new DynamoDbBatchStore(dynamoClient(env), env[FUNCTION_ENV.DECISIONS_TABLE]!);
  const deps = {
    batches,
    objects: new FsObjectStore(env[FUNCTION_ENV.BATCH_FOLDER]!),
    queue: queues.batch,
    files: queueBatchFiles(queues.files),
    policies: shared.policies,
    now: shared.now,
  };
  /** Reads `batch`'s file again; true when it could. */
  const readAgain = async (batch: BatchRecord, why: string): Promise<boolean> => {
    try {
      const after = await runIntake(deps, batch.source);
      parts.say(
        `resumed batch ${batch.batchId} (${why}): ${counted(after.counts.accepted, "item")} queued again (decided ones are not decided twice)`,
      );
      return true;
    } catch (error) {
      parts.say(`could not resume batch ${batch.batchId}: ${(error as Error).message}`);
      return false;
    }
  };
  return { batches, readAgain };
}

/**
 * Reads again now what the last run cut off ({@link resumeBatches}), and watches for intakes that
 * stop while this runs ({@link watchStoppedIntakes}); `stop` ends the watch once both are done.
 */
export function resumeAndWatch(
  parts: ResumeParts,
  queuesKept: boolean,
): { resumed: Promise<number>; stop: () => Promise<void> } {
  const resumed = resumeBatches(parts, queuesKept);
  const watch = watchStoppedIntakes(parts);
  return {
    resumed,
    stop: async () => {
      watch.stop();
      await resumed.catch(() => 0);
      await watch.done.catch(() => undefined);
    },
  };
}

/**
 * Runs intake again for every batch still submitting, or (`queuesKept` false: the batch lane's
 * messages did not survive) every batch not completed; returns how many.
 */
async function resumeBatches(parts: ResumeParts, queuesKept: boolean): Promise<number> {
  const { batches, readAgain } = await intakeParts(parts);
  let resumed = 0;
  for (const batch of await batches.listBatches(1000)) {
    const due = batch.status === "submitting" || (!queuesKept && batch.status !== "completed");
    if (due && (await readAgain(batch, "the last run had not finished reading it"))) resumed++;
  }
  return resumed;
}

/**
 * Every few seconds until stopped, reads again each batch still submitting whose intake lease has
 * lapsed (its reader stopped). `done` settles once the watch has stopped and its last read ended.
 */
function watchStoppedIntakes(parts: ResumeParts): { done: Promise<void>; stop: () => void } {
  let stopped = false;
  let wake = () => undefined as unknown;
  const done = (async () => {
    const { batches, readAgain } = await intakeParts(parts);
    while (!stopped) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CHECK_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopped) return;
      const now = parts.shared.now().toISOString();
      const listed = await batches.listBatches(1000).catch(() => []);
      for (const batch of listed)
        if (!stopped && batch.status === "submitting" && (batch.intakeUntil ?? "") < now)
          await readAgain(batch, "its intake stopped");
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
      wake();
    },
  };
}
