/**
 * Replaying a dead-letter queue after a fix: a filtered walk (by policy, failure reason and age)
 * that sends each matching letter home, or first only lists what it would move. Home is where
 * the letter came from (`shared/domain/dead-letters.ts`): its queue, or the target queue of the
 * rule that could not deliver it. Replayed items that were already decided are not decided again
 * (the decide path is idempotent per item and policy), a replayed pipeline event goes only as the
 * event its decision record stands for, and it is applied at most once by its `eventId`. The
 * filters choose which letters to look at; they never decide what a letter may do.
 */

import { type Clock, systemClock } from "../domain/clock.ts";
import type { RuleDelivery } from "../domain/dead-letters.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { DetailType, EVENT_SOURCE } from "../domain/events.ts";
import type { MessageQueue, QueueMessage } from "../domain/message-queue.ts";
import { type DeadLetter, describeDeadLetter } from "./dead-letter-description.ts";
import { eventFor } from "./record-event.ts";

/** Which dead letters to send home. */
export interface ReplayFilter {
  /** Only items naming this policy. */
  readonly policy?: string | undefined;
  /** Only letters whose failure reason contains this text (case-insensitive). */
  readonly reason?: string | undefined;
  /** Only letters first sent at least this long ago. */
  readonly olderThanMs?: number | undefined;
  /** Only letters first sent at most this long ago. */
  readonly newerThanMs?: number | undefined;
}

/** Sends one dead letter home; throws when it could not. */
export type SendsHome = (message: QueueMessage) => Promise<void>;

/** Options of {@link replayFiltered}. */
export interface FilteredReplayOptions {
  readonly deadLetters: MessageQueue;
  /** Where matching letters go; needed unless `dryRun`. */
  readonly sendHome?: SendsHome;
  readonly filter: ReplayFilter;
  /** List only; move nothing. */
  readonly dryRun: boolean;
  /** Looks up the noted failure reason of a message. */
  readonly failureOf?: (messageId: string) => Promise<{ reason: string } | undefined>;
  /** Most messages to look at. @default 10000 */
  readonly limit?: number;
  readonly now?: Clock;
}

/** What a replay did. */
export interface ReplayReport {
  readonly matched: DeadLetter[];
  /** Letters looked at that did not match the filter. */
  readonly skipped: number;
  readonly moved: number;
  /** Matching letters that could not be sent home, with why (they stay in the queue). */
  readonly failed: { readonly messageId: string; readonly error: string }[];
  /** Letters still in the dead-letter queue: every one looked at but not moved. */
  readonly left: number;
}

/** A dead-letter queue's letters go back to `queue`. */
export function homeQueue(queue: MessageQueue): SendsHome {
  return async (message) => void (await queue.send(message.body));
}

/**
 * A rule's dead letters (whole EventBridge events) go to the rule's target queue, as the rule
 * would have delivered them: the event (`deliver: "event"`) or its detail (`"detail"`, the
 * requested rule's input path). What goes is checked first ({@link ruleDelivery}).
 */
export function homeRuleTarget(
  queue: MessageQueue,
  options: { readonly deliver: RuleDelivery; readonly store?: DecisionStore },
): SendsHome {
  return async (message) => void (await queue.send(await ruleDelivery(message.body, options)));
}

/**
 * What a rule letter delivers, or why it may not go: a letter is only what its sender wrote, so
 * nothing in it decides what is sent. A pipeline event ("Decision Made", "Decision Rejected")
 * goes only when its event id is the one of the record it names, and what goes is that record's
 * own event (`eventFor(record)`) in the letter's envelope; an upstream "Decision Requested" goes
 * as its detail, under its producer's source (never the pipeline's), to be validated as any item.
 */
export async function ruleDelivery(
  body: string,
  options: { readonly deliver: RuleDelivery; readonly store?: DecisionStore },
): Promise<string> {
  const event = envelopeOf(body);
  const detailType = event["detail-type"];
  if (options.deliver === "detail") {
    if (event.source === EVENT_SOURCE || detailType !== DetailType.requested)
      throw new TypeError(
        `a ${detailType} from ${event.source} is not an upstream "Decision Requested": the requested rule never delivers it`,
      );
    return JSON.stringify(event.detail);
  }
  if (event.source !== EVENT_SOURCE)
    throw new TypeError(`source "${event.source}" is not the pipeline's: its rules never deliver it`);
  if (!options.store)
    throw new TypeError(
      "a pipeline event is checked against its decision record first: this needs the decisions table (--table or DECISIONS_TABLE)",
    );
  const record = await recordOf(detailType, event.detail, options.store);
  const own = eventFor(record);
  const differs = DECISIVE_FIELDS.filter(
    (field) => field in own.detail && own.detail[field] !== event.detail[field],
  );
  if (own.detailType !== detailType) differs.unshift("detail-type");
  if (differs.length > 0)
    throw new TypeError(
      `not the event its record stands for (its ${differs.join(", ")} differ from the record's ${own.detailType} ${String(own.detail.eventId)}): not replayed`,
    );
  return JSON.stringify({ ...event, detail: own.detail });
}

/** The fields of a pipeline event that say what was decided: a letter must agree with its record on each. */
const DECISIVE_FIELDS = ["eventId", "itemId", "policyId", "policyVersion", "route", "chosen"];

/** An EventBridge event as a rule's dead-letter queue stores it. */
interface StoredEnvelope {
  readonly source: string;
  readonly "detail-type": string;
  readonly detail: Record<string, unknown>;
  readonly [field: string]: unknown;
}

function envelopeOf(body: string): StoredEnvelope {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new TypeError("not an EventBridge event: the body is not JSON");
  }
  if (typeof event.source !== "string" || typeof event["detail-type"] !== "string")
    throw new TypeError("not an EventBridge event: no source or detail-type");
  if (typeof event.detail !== "object" || event.detail === null || Array.isArray(event.detail))
    throw new TypeError("the event has no detail");
  return event as unknown as StoredEnvelope;
}

/** The record a pipeline event names (a rejection names no version: the item's latest, or version 0). */
async function recordOf(
  detailType: string,
  detail: Record<string, unknown>,
  store: DecisionStore,
): Promise<DecisionRecord> {
  const { itemId, policyId, policyVersion } = detail;
  if (typeof itemId !== "string" || typeof policyId !== "string")
    throw new TypeError(`a ${detailType} without an item or policy id`);
  const record =
    detailType === DetailType.made && typeof policyVersion === "number"
      ? await store.get({ itemId, policyId, policyVersion })
      : detailType === DetailType.rejected
        ? ((await store.get({ itemId, policyId, policyVersion: 0 })) ??
          (await store.latest(itemId, policyId)))
        : undefined;
  if (!record) throw new TypeError(`no decision record for ${itemId} under ${policyId}: not replayed`);
  return record;
}

/**
 * Walks the dead-letter queue once: matching letters are sent home and deleted (or only listed
 * in a dry run); the others, and those that could not be sent, are made visible again at once.
 */
export async function replayFiltered(options: FilteredReplayOptions): Promise<ReplayReport> {
  if (!options.dryRun && !options.sendHome)
    throw new TypeError("a replay that moves needs a home to send to");
  const now = options.now ?? systemClock;
  const limit = options.limit ?? 10_000;
  const matched: DeadLetter[] = [];
  const failed: { messageId: string; error: string }[] = [];
  const seen = new Set<string>();
  let moved = 0;
  const release: string[] = [];
  while (seen.size < limit) {
    const messages = (await options.deadLetters.receive({ visibilitySeconds: 60 })).filter(
      (m) => !seen.has(m.messageId),
    );
    if (messages.length === 0) break;
    for (const message of messages) {
      seen.add(message.messageId);
      const letter = await describeDeadLetter(message, options.failureOf);
      if (!matches(letter, options.filter, now().getTime())) {
        release.push(message.receiptHandle);
        continue;
      }
      matched.push(letter);
      if (options.dryRun || !(await sentHome(message, options, failed))) {
        release.push(message.receiptHandle);
        continue;
      }
      await options.deadLetters.delete([message.receiptHandle]);
      moved++;
    }
  }
  // Make what stays in the dead-letter queue visible again at once.
  await options.deadLetters.release(release);
  return { matched, skipped: seen.size - matched.length, moved, failed, left: seen.size - moved };
}

async function sentHome(
  message: QueueMessage,
  options: FilteredReplayOptions,
  failed: { messageId: string; error: string }[],
): Promise<boolean> {
  try {
    await options.sendHome!(message);
    return true;
  } catch (error) {
    failed.push({ messageId: message.messageId, error: (error as Error).message });
    return false;
  }
}

function matches(letter: DeadLetter, filter: ReplayFilter, now: number): boolean {
  if (filter.policy !== undefined && letter.policy !== filter.policy) return false;
  if (
    filter.reason !== undefined &&
    !(letter.reason ?? "").toLowerCase().includes(filter.reason.toLowerCase())
  )
    return false;
  const age = now - Date.parse(letter.sentAt);
  if (filter.olderThanMs !== undefined && age < filter.olderThanMs) return false;
  if (filter.newerThanMs !== undefined && age > filter.newerThanMs) return false;
  return true;
}
