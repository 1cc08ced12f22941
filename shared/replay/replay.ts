/**
 * Replaying the dead-letter queue after a fix: either SQS's own redrive (StartMessageMoveTask,
 * everything back to the source queue), or a filtered re-send (by policy, failure reason and age)
 * that can first list what it would move. Replayed items that were already decided are not
 * decided again: the decide path is idempotent per item and policy version.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";

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
  readonly sqs: SQSClient;
  readonly dlqUrl: string;
  readonly queueUrl: string;
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

/** Starts SQS's own redrive of the whole dead-letter queue back to its source (or `destinationArn`). */
export async function redriveAll(sqs: SQSClient, dlqArn: string, destinationArn?: string): Promise<string> {
  const output = await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: dlqArn,
      ...(destinationArn ? { DestinationArn: destinationArn } : {}),
    }),
  );
  return output.TaskHandle ?? "";
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
  const release: { Id: string; ReceiptHandle: string }[] = [];
  while (seen.size < limit) {
    const batch = await options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: options.dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const messages = (batch.Messages ?? []).filter((m) => !seen.has(m.MessageId!));
    if (messages.length === 0) break;
    for (const message of messages) {
      seen.add(message.MessageId!);
      const letter = await describe(message, options.failureOf);
      if (matches(letter, options.filter, now())) {
        matched.push(letter);
        if (!options.dryRun) {
          await options.sqs.send(
            new SendMessageCommand({ QueueUrl: options.queueUrl, MessageBody: message.Body ?? "" }),
          );
          await options.sqs.send(
            new DeleteMessageCommand({ QueueUrl: options.dlqUrl, ReceiptHandle: message.ReceiptHandle! }),
          );
          moved++;
          continue;
        }
      } else {
        skipped++;
      }
      release.push({ Id: String(release.length), ReceiptHandle: message.ReceiptHandle! });
    }
  }
  // Make what stays in the dead-letter queue visible again at once.
  for (let i = 0; i < release.length; i += 10) {
    await options.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: options.dlqUrl,
        Entries: release
          .slice(i, i + 10)
          .map((entry, j) => ({ ...entry, Id: String(j), VisibilityTimeout: 0 })),
      }),
    );
  }
  return { matched, skipped, moved };
}

async function describe(
  message: { MessageId?: string; Body?: string; Attributes?: Record<string, string> },
  failureOf: FilteredReplayOptions["failureOf"],
): Promise<DeadLetter> {
  let itemId: string | undefined;
  let policy: string | undefined;
  try {
    const body = JSON.parse(message.Body ?? "") as { id?: unknown; policy?: unknown };
    if (typeof body.id === "string") itemId = body.id;
    if (typeof body.policy === "string") policy = body.policy;
  } catch {
    // An unparseable body still replays; it will be rejected with its reason.
  }
  const sent = Number(message.Attributes?.SentTimestamp ?? Date.now());
  return {
    messageId: message.MessageId!,
    itemId,
    policy,
    reason: (await failureOf?.(message.MessageId!))?.reason,
    sentAt: new Date(sent).toISOString(),
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
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
