/**
 * `decide batch status`: a batch's exact counts as a progress bar with rate and ETA, followed
 * until the batch is completed with --watch.
 */
import { sleep } from "../../shared/domain/backoff/backoff.ts";
import type { BatchRecord } from "../../shared/domain/batch.ts";
import { CommandError } from "../args.ts";
import type { CommandIo, Printed } from "../command.ts";
import { redrawLine } from "../terminal/terminal.ts";
import type { BatchContext } from "./batch-context.ts";

/** One line of progress: the bar, the counts, rate and ETA. */
function progressLine(batch: BatchRecord, rate: number): string {
  const c = batch.counts;
  const done = c.decided + c.failed + c.deadLettered;
  const share = c.accepted ? done / c.accepted : batch.status === "submitting" ? 0 : 1;
  const width = 24;
  const bar = `[${"#".repeat(Math.round(share * width))}${"-".repeat(width - Math.round(share * width))}]`;
  const eta = rate > 0 && c.accepted > done ? `, ETA ${Math.round((c.accepted - done) / rate)} s` : "";
  return `${bar} ${done}/${c.accepted}${batch.status === "submitting" ? "+" : ""} decided ${c.decided} (auto ${c.auto}, human ${c.human}, reviewed ${c.reviewed}), refused at intake ${c.rejected}, failed ${c.failed}, dead letters ${c.deadLettered}; ${rate.toFixed(1)}/s${eta}`;
}

/** Exit code of a follower stopped by Ctrl-C (128 + SIGINT, as shells report it). */
export const INTERRUPTED_EXIT_CODE = 130;

/** Options of {@link followBatch}. */
export interface StatusOptions {
  /** Wait for the batch to appear (a file just uploaded, which the intake function has yet to read). */
  readonly waitForBatch?: boolean;
  /** Called once, when intake has read the whole file (the batch is no longer "submitting"). */
  readonly onIntakeDone?: (batch: BatchRecord) => Promise<void>;
}

/** What following a batch found: the batch as it stands, or Ctrl-C first. */
export type BatchFollowed =
  | { readonly batch: BatchRecord; readonly interrupted?: undefined }
  | { readonly interrupted: true };

/**
 * Reads a batch; with `watch`, follows it until it is completed, drawing its progress on
 * `io.progress`. Ctrl-C stops following (the batch goes on) and notes how to follow it again.
 */
export async function followBatch(
  ctx: Pick<BatchContext, "batches" | "table">,
  batchId: string,
  watch: boolean,
  io: CommandIo,
  options: StatusOptions = {},
): Promise<BatchFollowed> {
  const stream = io.progress;
  let stop = () => {};
  const interrupted = new Promise<"interrupted">((resolve) => {
    stop = () => resolve("interrupted");
    process.once("SIGINT", stop);
  });
  const goesOn = (): BatchFollowed => {
    if (stream.isTTY) stream.write("\n");
    io.note(`the batch goes on: npx decide batch status ${batchId} --watch`);
    return { interrupted: true };
  };
  try {
    let batch = await ctx.batches.getBatch(batchId);
    while (!batch && watch && options.waitForBatch) {
      if ((await Promise.race([sleep(1000), interrupted])) === "interrupted") return goesOn();
      batch = await ctx.batches.getBatch(batchId);
    }
    if (!batch)
      throw new CommandError(`no batch ${batchId} in ${ctx.table} (decide batch list shows the recent ones)`);
    const started = performance.now();
    const first = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
    let last = "";
    let intakeDone = false;
    for (;;) {
      if (!intakeDone && batch.status !== "submitting") {
        intakeDone = true;
        await options.onIntakeDone?.(batch);
      }
      if (!watch || batch.status === "completed") break;
      const done = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
      const rate = (done - first) / Math.max((performance.now() - started) / 1000, 1e-3);
      const line = progressLine(batch, rate);
      if (stream.isTTY) redrawLine(stream, line);
      else if (line.split(";")[0] !== last) stream.write(`${line}\n`);
      last = line.split(";")[0]!;
      if ((await Promise.race([sleep(1000), interrupted])) === "interrupted") return goesOn();
      batch = (await ctx.batches.getBatch(batchId)) ?? batch;
    }
    if (stream.isTTY && watch) stream.write("\n");
    return { batch };
  } finally {
    process.off("SIGINT", stop);
  }
}

/** What `decide batch status` prints of what {@link followBatch} found, and its exit code. */
export function printFollowed(followed: BatchFollowed): Printed {
  if (followed.interrupted) return { lines: [], exitCode: INTERRUPTED_EXIT_CODE };
  const { batch } = followed;
  const lines = [
    `batch ${batch.batchId} (${batch.policyId}, ${batch.source}): ${batch.status}`,
    `  ${progressLine(batch, 0).replace(/; 0\.0\/s$/, "")}`,
  ];
  if (batch.status === "completed")
    lines.push(
      `  results: npx decide batch results ${batch.batchId} --out ${batch.batchId}.results.jsonl --errors ${batch.batchId}.errors.jsonl`,
    );
  return { lines, exitCode: 0 };
}
