/**
 * The async lane's result step: one notification (an invocation of one object ended) settles
 * every item of the object.
 *
 * - Only an invocation the submit step (or a retry here) made and recorded is settled: the
 *   notification's inference id must be the object's current one, and a completed one's output
 *   location the one SageMaker returned for it, under `async/output/`; the answers are read from
 *   the recorded location only. Anything else settles nothing and comes back `refused` with the
 *   reason. A notification that comes before its record (the submit step, or a retry, has not
 *   written it yet) throws: it comes back later rather than being trusted.
 * - Completed: the answers are read into a map by the hash of the request each answers
 *   (`async-answer.ts`); the items file is then read line by line and each item is decided by
 *   `decideMessage` with its own answer as the endpoint: one decision per item and policy, the
 *   record, the outbox and the publish lease, batch progress, exactly as on the real-time path.
 *   A cascade's later tiers are asked of `laterTiers`, as the live lane asks them. An item whose
 *   answer is missing, foreign, duplicated, for another request, or failed is failed alone
 *   (`async-failures.ts`); then the object is closed. Run again (a redelivered notification, a
 *   worker killed half-way), it decides nothing twice: decided items take the decide path's
 *   "already decided" branch, which also sends an event a crash left unsent.
 * - Failed: the whole object is invoked again (a new attempt, counted on its record) until
 *   `objectAttempts`; then every item not yet decided is dead-lettered with the reason. A
 *   notification of an attempt that is no longer the object's current one changes nothing.
 */

import { type AsyncNotification, parseAsyncNotification } from "../../domain/async/async-notification.ts";
import {
  type AsyncObject,
  type AsyncObjectStore,
  asyncKeys,
  attemptOf,
  type InvokesAsync,
  inferenceIdOf,
  keyOfLocation,
  type ObjectKeyParts,
  objectOfInputKey,
  s3Location,
} from "../../domain/async/async-objects.ts";
import { SystemOneViolationError } from "../../domain/contracts/system-one/index.ts";
import type { DecidesItems } from "../../domain/decision-endpoint.ts";
import { EndpointOverloadedError, EndpointUnavailableError } from "../../domain/errors.ts";
import { readLines } from "../../domain/input/lines.ts";
import type { ObjectStore } from "../../domain/object-store.ts";
import { ASYNC_LANE } from "../../domain/topology.ts";
import { type DecideDependencies, decideMessage } from "../decide-message.ts";
import { answeredEndpoint, ObjectAnswers, ScoredUnderOtherVersionError } from "./async-answer.ts";
import { type AsyncFailureDependencies, deadLetterItem, failItem, resubmitItem } from "./async-failures.ts";

/** What the result step needs. */
export interface ResultDependencies extends AsyncFailureDependencies {
  /** The decide path, all but its endpoint (each item's answer line stands in for it). */
  readonly decide: Omit<DecideDependencies, "endpoint">;
  /**
   * The endpoints a cascade's later tiers are asked of (the real-time endpoint and the tier
   * endpoints the decide function asks); absent: no later tier is asked here.
   */
  readonly laterTiers?: DecidesItems;
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
  /** `refused`: not an invocation this lane made and recorded (or not where it recorded it): nothing settled. */
  readonly outcome: "settled" | "retried" | "dead_lettered" | "stale" | "refused";
  readonly items: ItemCounts;
  /** Why a notification was refused or found stale. */
  readonly reason?: string;
  /** A completed object's count check: answer lines read, item lines decided. */
  readonly answers?: { readonly lines: number; readonly items: number };
}

/**
 * A notification that came before the record of its invocation: thrown, so that it comes back
 * (after the queue's visibility timeout) once the submit step or the retry has written it.
 */
export class InvocationNotRecordedError extends Error {
  override name = "InvocationNotRecordedError";
}

/** The longest answer or item line read (an item is at most 256 KiB; an answer a few KiB). */
const MAX_LINE_BYTES = 1024 * 1024;

/** Settles the object a notification body reports on. */
export async function settleNotification(body: string, deps: ResultDependencies): Promise<ResultOutcome> {
  const notification = parseAsyncNotification(body);
  const parts = objectOfInputKey(keyOfLocation(notification.inputLocation, deps.bucket));
  if (!parts) throw new RangeError(`${notification.inputLocation} is not an object of the async lane`);
  const items: ItemCounts = { decided: 0, rejected: 0, already_decided: 0, resubmitted: 0, dead_lettered: 0 };
  const result = (outcome: ResultOutcome["outcome"], extra: Partial<ResultOutcome> = {}) => ({
    objectId: parts.objectId,
    outcome,
    items,
    ...extra,
  });
  const checked = await invocationOf(parts, notification, deps);
  if ("refused" in checked) return result(checked.refused, { reason: checked.reason });
  const record = checked.record;
  if (notification.status === "completed") {
    const stream = await deps.objects.read(keyOfLocation(record.outputLocation, deps.bucket));
    if (stream) {
      const answers = await ObjectAnswers.read(stream, MAX_LINE_BYTES);
      const decided = await decideItems(parts, record, answers, items, deps);
      await deps.records.close(parts.objectId, "settled");
      return result("settled", { answers: { lines: answers.lines, items: decided } });
    }
    return result(
      await failedAttempt(record, parts, "the answers file is missing", notification, items, deps),
    );
  }
  return result(await failedAttempt(record, parts, notification.reason, notification, items, deps));
}

/**
 * The object's record when the notification is of its current, recorded invocation; otherwise
 * why it settles nothing. Throws {@link InvocationNotRecordedError} for one whose record is not
 * written yet.
 */
async function invocationOf(
  parts: ObjectKeyParts,
  notification: AsyncNotification,
  deps: ResultDependencies,
): Promise<{ record: AsyncObject } | { refused: "refused" | "stale"; reason: string }> {
  const { inferenceId } = notification;
  const attempt = attemptOf(parts.objectId, inferenceId);
  if (attempt === undefined)
    return { refused: "refused", reason: `${inferenceId} is no invocation of object ${parts.objectId}` };
  const record = await deps.records.get(parts.objectId);
  if (!record || (record.state === "submitted" && attempt > record.attempts))
    throw new InvocationNotRecordedError(
      `no record of ${inferenceId} yet (attempt ${attempt}, ${record ? `${record.attempts} recorded` : "no record"}): the notification comes back later`,
    );
  if (record.state !== "submitted" || record.inferenceId !== inferenceId)
    return { refused: "stale", reason: `${inferenceId} is not the open invocation of ${parts.objectId}` };
  if (notification.status !== "completed") return { record };
  const output = `${s3Location(deps.bucket, ASYNC_LANE.prefixes.output)}`;
  if (notification.outputLocation !== record.outputLocation || !record.outputLocation.startsWith(output))
    return {
      refused: "refused",
      reason: `${inferenceId} names ${notification.outputLocation.slice(0, 300)}; its answers were to be at ${record.outputLocation} (under ${output})`,
    };
  return { record };
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
    const attempts = record.attempts + 1;
    // Invoked first, then counted: a crash in between invokes the same attempt again, never none.
    const invoked = await deps.endpoint.invoke({
      endpointName: record.endpointName,
      inputLocation: s3Location(deps.bucket, asyncKeys(parts).input),
      inferenceId: inferenceIdOf(parts.objectId, attempts),
    });
    const next = { attempts, inferenceId: invoked.inferenceId, outputLocation: invoked.outputLocation };
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

/** The item lines of an object with their index (the `n` of their identity). */
async function* itemLines(items: AsyncIterable<Uint8Array>): AsyncGenerator<{ body: string; n: number }> {
  let n = 0;
  for await (const item of readLines(items, { maxLineBytes: MAX_LINE_BYTES })) {
    if (item.text === undefined || item.text === "") continue;
    yield { body: item.text, n: n++ };
  }
}

/** Decides every item of a completed object, `itemConcurrency` at a time; returns how many items it read. */
async function decideItems(
  parts: ObjectKeyParts,
  record: AsyncObject,
  answers: ObjectAnswers,
  items: ItemCounts,
  deps: ResultDependencies,
): Promise<number> {
  const stream = await deps.objects.read(asyncKeys(parts).items);
  if (!stream) throw new RangeError(`the items of object ${parts.objectId} are missing`);
  const source = itemLines(stream);
  const current = deps.decide.policies.current(parts.policyId);
  const cascades = current?.version === parts.policyVersion && current.cascade !== undefined;
  let failure: unknown;
  let read = 0;
  const worker = async () => {
    while (failure === undefined) {
      const next = await source.next();
      if (next.done) return;
      read++;
      const endpoint = answeredEndpoint({
        answers,
        n: next.value.n,
        object: record,
        cascades,
        later: deps.laterTiers,
      });
      try {
        items[await decideOne(parts, next.value.body, endpoint, deps)]++;
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: deps.itemConcurrency }, worker));
  if (failure !== undefined) throw failure;
  return read;
}

/** Decides one item with its own answer on the decide path; a failed or missing answer fails the item alone. */
async function decideOne(
  parts: ObjectKeyParts,
  body: string,
  endpoint: DecidesItems,
  deps: ResultDependencies,
): Promise<keyof ItemCounts> {
  try {
    const { outcome } = await decideMessage(body, { ...deps.decide, endpoint });
    return outcome;
  } catch (error) {
    // A new version came out, or a later tier's endpoint was too busy: again, counting no failure.
    if (error instanceof ScoredUnderOtherVersionError || error instanceof EndpointOverloadedError) {
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
