/**
 * Replaying a dead-letter queue after a fix: a filtered walk (by policy, failure reason and age)
 * that sends each matching letter home, or first only lists what it would move. Home is where
 * the letter came from (`shared/domain/dead-letters.ts`): its queue, or the bus for an event a
 * rule could not deliver. Replayed items that were already decided are not decided again (the
 * decide path is idempotent per item and policy), and a replayed event is applied at most once
 * by its `eventId`.
 */
import {
  DetailType,
  type DetailTypeName,
  type PipelineEvent,
  type PublishesEvents,
} from "../domain/events.ts";
import type { MessageQueue, QueueMessage } from "../domain/message-queue.ts";
import { type DeadLetter, describeDeadLetter } from "./dead-letter-description.ts";

/** Which dead letters to send home. */
export interface ReplayFilter {
  /** Only items naming this policy. */
  readonly policy?: string;
  /** Only letters whose failure reason contains this text (case-insensitive). */
  readonly reason?: string;
  /** Only letters first sent at least this long ago. */
  readonly olderThanMs?: number;
  /** Only letters first sent at most this long ago. */
  readonly newerThanMs?: number;
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
  readonly now?: () => number;
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

/** A rule target's dead letters (whole EventBridge events) go back on the bus through `publisher`. */
export function homeBus(publisher: PublishesEvents): SendsHome {
  return (message) => publisher.publish([storedEvent(message.body)]);
}

/** The event a rule could not deliver, as EventBridge stored it in the dead-letter queue, ready to put again. */
export function storedEvent(body: string): PipelineEvent {
  const event = JSON.parse(body) as { source?: unknown; "detail-type"?: unknown; detail?: unknown };
  const known = Object.values(DetailType) as string[];
  if (typeof event.source !== "string" || typeof event["detail-type"] !== "string")
    throw new TypeError("not an EventBridge event: no source or detail-type");
  if (!known.includes(event["detail-type"]))
    throw new TypeError(`not a pipeline event: detail-type "${event["detail-type"]}"`);
  if (typeof event.detail !== "object" || event.detail === null)
    throw new TypeError("the event has no detail");
  const detail = event.detail as Record<string, unknown>;
  return {
    source: event.source,
    detailType: event["detail-type"] as DetailTypeName,
    detail,
    eventKey: `replay:${String(detail.eventId ?? detail.itemId ?? detail.id ?? "")}`,
  };
}

/**
 * Walks the dead-letter queue once: matching letters are sent home and deleted (or only listed
 * in a dry run); the others, and those that could not be sent, are made visible again at once.
 */
export async function replayFiltered(options: FilteredReplayOptions): Promise<ReplayReport> {
  if (!options.dryRun && !options.sendHome)
    throw new TypeError("a replay that moves needs a home to send to");
  const now = options.now ?? Date.now;
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
      if (!matches(letter, options.filter, now())) {
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
