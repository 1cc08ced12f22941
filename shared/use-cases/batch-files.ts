/**
 * The batch files step: run by a function of its own, on a message the batch's completion (or a
 * later change) sends, it writes the results file (one line per decided item: id, route, chosen
 * option, distribution, reason, the deciding model, the record's status as the table has it when
 * the file is written, so "actioned" once the action is applied, and the label once reviewed) and the errors file
 * (intake's refused lines, then the items the pipeline refused or dead-lettered), then announces
 * what is due: "Batch Completed" once the files exist, "Batch Reviewed" once every escalated item
 * has its label. The files are streamed: a page of members at a time from the table into the
 * object store's streamed write (a multipart upload on S3), so memory stays at one page and one
 * part whatever the batch's size.
 *
 * Each announcement is claimed under an expiring lease (a crashed run's claim lapses and the
 * message's redelivery takes over); events go out at least once with a stable id. The files'
 * version is read before they are written: a change that lands during the write leaves them
 * stale, and the step asks for another rewrite after `BATCH_FILES.rewriteDelaySeconds`.
 */

import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import {
  type BatchMember,
  type BatchStore,
  currentStatus,
  isComplete,
  isReviewed,
  type RequestsBatchFiles,
} from "../domain/batch.ts";
import type { Clock } from "../domain/clock.ts";
import { publishedEvent } from "../domain/contracts/events.ts";
import { decidingModel } from "../domain/deciding-model.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { DetailType, type PipelineEvent, type PublishesEvents } from "../domain/events.ts";
import type { MessageQueue } from "../domain/message-queue.ts";
import type { ObjectStore } from "../domain/object-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { BATCH_ANNOUNCE_LEASE_MS, BATCH_FILES } from "../domain/topology.ts";
import { batchKeys } from "./batch-progress.ts";

/** What the files step needs. */
export interface BatchFilesDependencies {
  readonly batches: BatchStore;
  readonly objects: ObjectStore;
  /** The decision records: each line's status and model as they stand when the file is written. */
  readonly decisions: Pick<DecisionStore, "get">;
  readonly policies: Pick<PolicyRegistry, "version">;
  readonly publisher: PublishesEvents;
  /** Asks for a later rewrite when a change came during this one. */
  readonly files: RequestsBatchFiles;
  /** The clock: set once where the handlers are composed (a test sets its own). */
  readonly now: Clock;
}

/** What one run did. */
export type BatchFilesOutcome =
  /** Nothing to write yet (a stale request), or no such batch. */
  | "not_complete"
  /** The files are current and every due event went out. */
  | "current"
  /** Another run holds the completion: it writes the files. */
  | "busy"
  | "completed"
  | "reviewed"
  | "rewritten";

/** Writes the batch's files and sends the events its counts call for. */
export async function writeBatchFiles(
  deps: BatchFilesDependencies,
  batchId: string,
): Promise<BatchFilesOutcome> {
  const batch = await deps.batches.getBatch(batchId);
  if (!batch || !isComplete(batch)) return "not_complete";
  const now = deps.now();
  const claim = (phase: "completed" | "reviewed") =>
    deps.batches.claimAnnouncement(batchId, phase, now.getTime(), now.getTime() + BATCH_ANNOUNCE_LEASE_MS);
  const completing = !batch.completedEventPublished && (await claim("completed"));
  if (!batch.completedEventPublished && !completing) return "busy";
  const reviewing =
    batch.counts.human > 0 && isReviewed(batch) && !batch.reviewedEventPublished && (await claim("reviewed"));
  if (!completing && !reviewing && batch.filesStaleSince === undefined) return "current";

  const version = batch.filesVersion ?? 0;
  const keys = batchKeys(batchId);
  await deps.objects.putStream(keys.results, resultLines(deps, batchId));
  await deps.objects.putStream(keys.errors, errorLines(deps, batchId));
  // Each event goes out, then is marked sent: a crash between the two sends it again (same id).
  const announce = async (
    flag: "completedEventPublished" | "reviewedEventPublished",
    event: PipelineEvent,
  ) => {
    await deps.publisher.publish([event]);
    await deps.batches.updateBatch(batchId, { [flag]: true });
  };
  if (completing) {
    const completedAt = batch.completedAt ?? now.toISOString();
    const results = { results: keys.results, errors: keys.errors };
    await deps.batches.updateBatch(batchId, { status: "completed", completedAt, results });
    const { policyId, source, counts } = batch;
    const detail = { batchId, policyId, source, counts, ...results, completedAt };
    await announce(
      "completedEventPublished",
      publishedEvent(DetailType.batchCompleted, `batch-completed|${batchId}`, detail),
    );
  }
  if (reviewing) {
    const detail = { batchId, policyId: batch.policyId, counts: batch.counts, results: keys.results };
    await announce(
      "reviewedEventPublished",
      publishedEvent(DetailType.batchReviewed, `batch-reviewed|${batchId}`, {
        ...detail,
        reviewedAt: now.toISOString(),
      }),
    );
  }
  if (!(await deps.batches.markFilesCurrent(batchId, version)))
    await deps.files.request(batchId, BATCH_FILES.rewriteDelaySeconds);
  return completing ? "completed" : reviewing ? "reviewed" : "rewritten";
}

/**
 * A results line: the member's decision, with the status its record has now (an automated item
 * is "actioned" once its action is applied; the member keeps the status it was decided with) and
 * the model that decided it.
 */
function resultLine(
  m: BatchMember,
  record: DecisionRecord | undefined,
  policies: BatchFilesDependencies["policies"],
): string {
  const model = record && decidingModel(record, policies.version(m.policyId, m.policyVersion));
  const label = record ? record.label : m.label;
  return `${JSON.stringify({
    id: m.itemId,
    route: m.route,
    chosen: m.chosen,
    distribution: m.distribution,
    reason: m.reason,
    status: record?.status ?? currentStatus(m),
    ...(model ? { model, modelSha256: record?.modelSha256 } : {}),
    ...(label !== undefined ? { label } : {}),
  })}\n`;
}

/** The results file, a page of members at a time (their records read together). */
async function* resultLines(deps: BatchFilesDependencies, batchId: string): AsyncGenerator<string> {
  for await (const page of deps.batches.memberPages(batchId, ["auto", "human"])) {
    const records = await Promise.all(
      page.map((m) =>
        deps.decisions.get({ itemId: m.itemId, policyId: m.policyId, policyVersion: m.policyVersion }),
      ),
    );
    yield page.map((m, i) => resultLine(m, records[i], deps.policies)).join("");
  }
}

/** The errors file: intake's refused lines as they are, then the members that failed or were dead-lettered. */
async function* errorLines(deps: BatchFilesDependencies, batchId: string): AsyncGenerator<string> {
  const refused = await deps.objects.read(batchKeys(batchId).rejected);
  if (refused)
    for await (const line of createInterface({
      input: Readable.from(refused),
      crlfDelay: Number.POSITIVE_INFINITY,
    }))
      if (line.trim()) yield `${line}\n`;
  for await (const page of deps.batches.memberPages(batchId, ["failed", "dead_lettered"]))
    yield page
      .map((m) => `${JSON.stringify({ id: m.itemId, stage: m.state, problem: m.problem ?? "" })}\n`)
      .join("");
}

/** The files step's requests as messages on its queue (`{"batchId": ...}`). */
export function queueBatchFiles(queue: Pick<MessageQueue, "send">): RequestsBatchFiles {
  return {
    request: async (batchId, delaySeconds = 0) =>
      void (await queue.send(JSON.stringify({ batchId }), delaySeconds > 0 ? { delaySeconds } : {})),
  };
}

/** The batch id a files-step message names; a RangeError for anything else. */
export function batchIdOfRequest(body: string): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    // reported below
  }
  const batchId = (value as { batchId?: unknown } | null)?.batchId;
  if (typeof batchId !== "string" || !batchId)
    throw new RangeError(`batch files request: ${body.slice(0, 80)} names no batchId`);
  return batchId;
}
