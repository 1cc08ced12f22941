/**
 * The async lane's result step: one notification (an invocation of one object ended) settles
 * every item of the object.
 *
 * - Completed: the items file and the answers file are read line by line in step (memory flat in
 *   the object's size) and each item is decided by `decideMessage` with its own answer line as the
 *   endpoint (`async-answer.ts`): one decision per item and policy, the record, the outbox and the
 *   publish lease, batch progress, exactly as on the real-time path. An item whose answer failed
 *   is failed alone (`async-failures.ts`); then the object is closed. Run again (a redelivered
 *   notification, a worker killed half-way), it decides nothing twice: decided items take the
 *   decide path's "already decided" branch, which also sends an event a crash left unsent.
 * - Failed: the whole object is invoked again (a new attempt, counted on its record) until
 *   `objectAttempts`; then every item not yet decided is dead-lettered with the reason. A
 *   notification of an attempt that is no longer the object's current one changes nothing.
 */

import { type AsyncNotification, parseAsyncNotification } from "../domain/async-notification.ts";
import {
  type AsyncObject,
  type AsyncObjectStore,
  asyncKeys,
  type InvokesAsync,
  inferenceIdOf,
  keyOfLocation,
  type ObjectKeyParts,
  objectOfInputKey,
  s3Location,
} from "../domain/async-objects.ts";
import { SystemOneViolationError } from "../domain/contracts/system-one/index.ts";
import { EndpointUnavailableError } from "../domain/errors.ts";
import { readLines } from "../domain/input/lines.ts";
import type { ObjectStore } from "../domain/object-store.ts";
import { answeredEndpoint, ScoredUnderOtherVersionError } from "./async-answer.ts";
import { type AsyncFailureDependencies, deadLetterItem, failItem, resubmitItem } from "./async-failures.ts";
import { type DecideDependencies, decideMessage } from "./decide-message.ts";

/** What the result step needs. */
export interface ResultDependencies extends AsyncFailureDependencies {
  /** The decide path, all but its endpoint (each item's answer line stands in for it). */
  readonly decide: Omit<DecideDependencies, "endpoint">;
  /** The pipeline bucket, and its name for `s3://` locations. */
  readonly objects: ObjectStore;
  readonly bucket: string;
  readonly records: AsyncObjectStore;
  /** Invokes an object again after a failed attempt. */
  readonly endpoint: InvokesAsync;
  readonly endpointName: string;
  /** Tries of a whole object. */
  readonly objectAttempts: number;
  /** Items of one object decided at once. */
  readonly itemConcurrency: number;
}

/** What the items of an object came to. */
export interface ItemCounts {
  decided: number;
  rejected: number;
  already_decided: number;
  resubmitted: number;
  dead_lettered: number;
}

/** What one notification did. */
export interface ResultOutcome {
  readonly objectId: string;
  readonly outcome: "settled" | "retried" | "dead_lettered" | "stale";
  readonly items: ItemCounts;
}

/** The longest answer or item line read (an item is at most 256 KiB; an answer a few KiB). */
const MAX_LINE_BYTES = 1024 * 1024;

/** Settles the object a notification body reports on. */
export async function settleNotification(body: string, deps: ResultDependencies): Promise<ResultOutcome> {
  const notification = parseAsyncNotification(body);
  const parts = objectOfInputKey(keyOfLocation(notification.inputLocation, deps.bucket));
  if (!parts) throw new RangeError(`${notification.inputLocation} is not an object of the async lane`);
  const record = await recordOf(parts, notification, deps);
  const items: ItemCounts = { decided: 0, rejected: 0, already_decided: 0, resubmitted: 0, dead_lettered: 0 };
  const result = (outcome: ResultOutcome["outcome"]) => ({ objectId: parts.objectId, outcome, items });
  if (notification.status === "completed") {
    const answers = await deps.objects.read(keyOfLocation(notification.outputLocation, deps.bucket));
    if (answers) {
      await decideItems(parts, answers, items, deps);
      await deps.records.close(parts.objectId, "settled");
      return result("settled");
    }
    return result(
      await failedAttempt(record, parts, "the answers file is missing", notification, items, deps),
    );
  }
  return result(await failedAttempt(record, parts, notification.reason, notification, items, deps));
}

/** The object's record; created from its key when the notification came before the submit step recorded it. */
async function recordOf(
  parts: ObjectKeyParts,
  notification: AsyncNotification,
  deps: ResultDependencies,
): Promise<AsyncObject> {
  const found = await deps.records.get(parts.objectId);
  if (found) return found;
  const attempt = Number(/-a(\d+)$/.exec(notification.inferenceId)?.[1] ?? 1);
  await deps.records.create({
    ...parts,
    endpointName: deps.endpointName,
    itemCount: 0,
    attempts: attempt,
    inferenceId: notification.inferenceId,
    state: "submitted",
    submittedAt: deps.decide.now().toISOString(),
  });
  return (await deps.records.get(parts.objectId))!;
}

/** Invokes the object again, or dead-letters its items after the last attempt; a stale notification does nothing. */
async function failedAttempt(
  record: AsyncObject,
  parts: ObjectKeyParts,
  reason: string,
  notification: AsyncNotification,
  items: ItemCounts,
  deps: ResultDependencies,
): Promise<ResultOutcome["outcome"]> {
  if (record.state !== "submitted" || record.inferenceId !== notification.inferenceId) return "stale";
  if (record.attempts < deps.objectAttempts) {
    const next = {
      attempts: record.attempts + 1,
      inferenceId: inferenceIdOf(parts.objectId, record.attempts + 1),
    };
    // Invoked first, then counted: a crash in between invokes the same attempt again, never none.
    await deps.endpoint.invoke({
      endpointName: record.endpointName,
      inputLocation: s3Location(deps.bucket, asyncKeys(parts).input),
      inferenceId: next.inferenceId,
    });
    return (await deps.records.retry(parts.objectId, record.inferenceId, next)) ? "retried" : "stale";
  }
  const why = `the async invocation of object ${parts.objectId} failed ${record.attempts} times: ${reason}`;
  const stream = await deps.objects.read(asyncKeys(parts).items);
  if (!stream) throw new RangeError(`the items of object ${parts.objectId} are missing`);
  for await (const line of readLines(stream, { maxLineBytes: MAX_LINE_BYTES })) {
    if (line.text === undefined || line.text === "") continue;
    // An item decided meanwhile (through another object) stays decided.
    const { id, policy } = JSON.parse(line.text) as { id: string; policy: string };
    if (await deps.store.latest(id, policy)) continue;
    await deadLetterItem(parts.source, line.text, why, deps);
    items.dead_lettered++;
  }
  await deps.records.close(parts.objectId, "dead_lettered", why);
  return "dead_lettered";
}

/** The items and their answers, in step; an answer line that is missing or unreadable comes as undefined. */
async function* pairs(
  items: AsyncIterable<Uint8Array>,
  answers: AsyncIterable<Uint8Array>,
): AsyncGenerator<{ body: string; answer: string | undefined }> {
  const answerLines = readLines(answers, { maxLineBytes: MAX_LINE_BYTES });
  for await (const item of readLines(items, { maxLineBytes: MAX_LINE_BYTES })) {
    if (item.text === undefined || item.text === "") continue;
    const next = await answerLines.next();
    yield { body: item.text, answer: next.done ? undefined : next.value.text };
  }
  await answerLines.return(undefined);
}

/** Decides every item of a completed object, `itemConcurrency` at a time. */
async function decideItems(
  parts: ObjectKeyParts,
  answers: AsyncIterable<Uint8Array>,
  items: ItemCounts,
  deps: ResultDependencies,
): Promise<void> {
  const stream = await deps.objects.read(asyncKeys(parts).items);
  if (!stream) throw new RangeError(`the items of object ${parts.objectId} are missing`);
  const source = pairs(stream, answers);
  let failure: unknown;
  const worker = async () => {
    while (failure === undefined) {
      const next = await source.next();
      if (next.done) return;
      try {
        items[await decideOne(parts, next.value.body, next.value.answer, deps)]++;
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: deps.itemConcurrency }, worker));
  if (failure !== undefined) throw failure;
}

/** Decides one item with its answer line on the decide path; a failed answer fails the item alone. */
async function decideOne(
  parts: ObjectKeyParts,
  body: string,
  answer: string | undefined,
  deps: ResultDependencies,
): Promise<keyof ItemCounts> {
  try {
    const { outcome } = await decideMessage(body, {
      ...deps.decide,
      endpoint: answeredEndpoint(answer, parts),
    });
    return outcome;
  } catch (error) {
    if (error instanceof ScoredUnderOtherVersionError) {
      await resubmitItem(parts.source, body, deps);
      return "resubmitted";
    }
    const answerFailed =
      error instanceof EndpointUnavailableError ||
      (error instanceof SystemOneViolationError && error.side === "response");
    // Anything else (the table or the bus unreachable) fails the notification: it comes back.
    if (!answerFailed) throw error;
    return failItem(parts.source, body, `${error.name}: ${error.message}`, deps);
  }
}
