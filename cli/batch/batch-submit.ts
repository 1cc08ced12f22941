/**
 * `decide batch submit`: stores the file under `incoming/<policy>/<batch id>/` (the pipeline
 * bucket deployed; locally the folder, where this command then runs the intake itself, as the
 * intake function would) and follows the batch to the end unless told not to wait.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { systemClock } from "../../shared/domain/clock.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import type { ItemProblem } from "../../shared/domain/item.ts";
import type { ObjectStore } from "../../shared/domain/object-store.ts";
import { counted } from "../../shared/domain/plural.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { queueBatchFiles } from "../../shared/use-cases/batch-files.ts";
import { runIntake } from "../../shared/use-cases/batch-intake.ts";
import { batchKeys } from "../../shared/use-cases/batch-progress.ts";
import { UsageError } from "../args.ts";
import { queueAt } from "../aws.ts";
import type { CommandIo } from "../command.ts";
import { cannotRead } from "../input-file.ts";
import { intakeProgress } from "../terminal/intake-progress.ts";
import { refusedLineText } from "../terminal/terminal.ts";
import { type BatchWhere, context } from "./batch-context.ts";
import { type BatchFollowed, followBatch } from "./batch-status.ts";

/** What `decide batch submit` was asked. */
export interface SubmitOptions {
  readonly file: string;
  readonly policyId: string;
  readonly policiesDir: string;
  readonly noWait: boolean;
  readonly where: BatchWhere;
  /** Locally (no bucket): the batch queue and the batch files queue the intake sends to. */
  readonly local: { readonly queueUrl: string; readonly filesQueueUrl: string } | undefined;
}

/** How many lines intake refused, and the batch as following it found it (none with --no-wait). */
export interface Submitted {
  readonly refused: number;
  readonly followed: BatchFollowed | undefined;
}

/** Stores the file (and locally reads it as intake would), then follows the batch. */
export async function submit(options: SubmitOptions, io: CommandIo): Promise<Submitted> {
  const { file, policyId } = options;
  const registry = await PolicyRegistry.fromFolder(options.policiesDir);
  if (!registry.current(policyId))
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  await regularFile(file);
  const ctx = context(options.where);
  // Locally this command is the intake function: it reads the file from the folder and queues it.
  const local = options.local && {
    queue: queueAt(options.local.queueUrl, ctx.aws),
    files: queueBatchFiles(queueAt(options.local.filesQueueUrl, ctx.aws)),
  };
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15).toLowerCase();
  const batchId = `b-${stamp}-${randomBytes(3).toString("hex")}`;
  const key = `incoming/${policyId}/${batchId}/${basename(file)}`;
  // The services first: a file stored while they are down would be a batch nobody knows of.
  await ctx.batches.getBatch(batchId);
  await local?.queue.depth();
  // Streamed from the file: memory does not grow with it.
  await ctx.objects.putStream(key, createReadStream(file));
  io.say(`batch ${batchId}: ${file} stored as ${key}`);
  let refused = 0;
  const listRefused = async () => {
    refused = await noteRefused(ctx.objects, batchId, io);
  };
  if (local) {
    const progress = intakeProgress(io.progress);
    const batch = await runIntake(
      { batches: ctx.batches, objects: ctx.objects, policies: registry, now: systemClock, ...local },
      key,
      { onProgress: progress.update },
    )
      .finally(progress.end)
      .catch(async (error: unknown) => {
        // Without its batch record no one would ever read the file again: take it back.
        if (!(await ctx.batches.getBatch(batchId).catch(() => undefined)))
          await ctx.objects.delete(key).catch(() => undefined);
        throw error;
      });
    await listRefused();
    io.say(
      `read ${counted(batch.counts.lines, "line")}: ${batch.counts.accepted} queued, ${batch.counts.rejected} refused`,
    );
  }
  if (options.noWait) {
    io.say(`follow it with: npx decide batch status ${batchId} --watch`);
    return { refused, followed: undefined };
  }
  const followed = await followBatch(ctx, batchId, true, io, {
    waitForBatch: true,
    ...(local ? {} : { onIntakeDone: listRefused }),
  });
  return { refused, followed };
}

/**
 * Checks that `file` is a regular file: a device or a pipe (/dev/zero, /dev/stdin) has no end a
 * batch could wait for, and would be stored until the disk is full.
 */
async function regularFile(file: string): Promise<void> {
  const info = await stat(file).catch((error: unknown) => {
    throw cannotRead(file, error);
  });
  if (info.isDirectory()) throw cannotRead(file, new Error("it is a folder, not a file"));
  if (!info.isFile()) throw new UsageError(`${file} is not a regular file: a batch is a file with an end`);
}

/** Notes the lines intake refused, as `decide publish` does; returns how many. */
async function noteRefused(objects: ObjectStore, batchId: string, io: CommandIo): Promise<number> {
  const stream = await objects.read(batchKeys(batchId).rejected);
  let count = 0;
  for await (const line of stream ? readLines(stream) : []) {
    if (!line.text?.trim()) continue;
    const refused = JSON.parse(line.text) as { line: number; problems: ItemProblem[] };
    io.note(refusedLineText(refused.line, refused.problems));
    count++;
  }
  return count;
}
