/**
 * `decide batch status`: a batch's exact counts as a progress bar with rate and ETA, followed
 * until the batch is completed with --watch.
 */
import { sleep } from "../shared/domain/backoff.ts";
import type { BatchRecord } from "../shared/domain/batch.ts";
import { CommandError } from "./args.ts";
import { context, type Flags } from "./batch-context.ts";

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

/** Shows a batch; with `watch`, follows it until it is completed. */
export async function status(batchId: string, watch: boolean, values: Flags): Promise<number> {
  const ctx = context(values);
  let batch = await ctx.batches.getBatch(batchId);
  if (!batch)
    throw new CommandError(`no batch ${batchId} in ${ctx.table} (decide batch list shows the recent ones)`);
  const started = performance.now();
  const first = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
  let last = "";
  while (watch && batch.status !== "completed") {
    const done = batch.counts.decided + batch.counts.failed + batch.counts.deadLettered;
    const rate = (done - first) / Math.max((performance.now() - started) / 1000, 1e-3);
    const line = progressLine(batch, rate);
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else if (line.split(";")[0] !== last) process.stderr.write(`${line}\n`);
    last = line.split(";")[0]!;
    await sleep(1000);
    batch = (await ctx.batches.getBatch(batchId)) ?? batch;
  }
  if (process.stderr.isTTY && watch) process.stderr.write("\n");
  console.log(`batch ${batch.batchId} (${batch.policyId}, ${batch.source}): ${batch.status}`);
  console.log(`  ${progressLine(batch, 0).replace(/; 0\.0\/s$/, "")}`);
  if (batch.status === "completed")
    console.log(
      `  results: npx decide batch results ${batch.batchId} --out ${batch.batchId}.results.jsonl --errors ${batch.batchId}.errors.jsonl`,
    );
  return 0;
}
