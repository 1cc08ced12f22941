/**
 * Replaying the dead-letter queue after a fix: a filtered re-send (by policy, failure reason and age)
 * that can first list what it would move. Replayed items that were already decided are not
 * decided again: the decide path is idempotent per item and policy version.
 */
import type { MessageQueue, QueueMessage } from "../domain/message-queue.ts";

/** Which dead-letter messages to re-send. */
export interface ReplayFilter {
  /** Only items naming this policy. */
  readonly policy?: string;
  /** Only messages whose noted failure reason contains this text (case-insensitive). */
  readonly reason?: string;
  /** Only messages first sent at least this long ago. */
  readonly olderThanMs?: number;
  /** Only messages first sent at most this long ago. */
  readonly newerThanMs?: number;
}

/** One dead-letter message, as listed by a dry run. */
export interface DeadLetter {
  readonly messageId: string;
  readonly itemId: string | undefined;
  readonly policy: string | undefined;
  readonly reason: string | undefined;
  readonly sentAt: string;
  readonly receiveCount: number;
}

/** Options of {@link replayFiltered}. */
export interface FilteredReplayOptions {
  readonly deadLetters: MessageQueue;
  readonly destination: MessageQueue;
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
  readonly skipped: number;
  readonly moved: number;
}

/**
 * Walks the dead-letter queue once: matching messages are re-sent to `queueUrl` and deleted from
 * the dead-letter queue (or only listed in a dry run); the others are released at once.
 */
export async function replayFiltered(options: FilteredReplayOptions): Promise<ReplayReport> {
  const now = options.now ?? Date.now;
  const limit = options.limit ?? 10_000;
  const matched: DeadLetter[] = [];
  const seen = new Set<string>();
  let skipped = 0;
  let moved = 0;
  const release: string[] = [];
  while (seen.size < limit) {
    const messages = (await options.deadLetters.receive({ visibilitySeconds: 60 })).filter(
      (m) => !seen.has(m.messageId),
    );
    if (messages.length === 0) break;
    for (const message of messages) {
      seen.add(message.messageId);
      const letter = await describe(message, options.failureOf);
      if (matches(letter, options.filter, now())) {
        matched.push(letter);
        if (!options.dryRun) {
          await options.destination.send(message.body);
          await options.deadLetters.delete([message.receiptHandle]);
          moved++;
          continue;
        }
      } else {
        skipped++;
      }
      release.push(message.receiptHandle);
    }
  }
  // Make what stays in the dead-letter queue visible again at once.
  await options.deadLetters.release(release);
  return { matched, skipped, moved };
}

async function describe(
  message: QueueMessage,
  failureOf: FilteredReplayOptions["failureOf"],
): Promise<DeadLetter> {
  let itemId: string | undefined;
  let policy: string | undefined;
  try {
    const body = JSON.parse(message.body) as { id?: unknown; policy?: unknown };
    if (typeof body.id === "string") itemId = body.id;
    if (typeof body.policy === "string") policy = body.policy;
  } catch {
    // An unparseable body still replays; it will be rejected with its reason.
  }
  return {
    messageId: message.messageId,
    itemId,
    policy,
    reason: (await failureOf?.(message.messageId))?.reason,
    sentAt: new Date(message.sentAt).toISOString(),
    receiveCount: message.receiveCount,
  };
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
