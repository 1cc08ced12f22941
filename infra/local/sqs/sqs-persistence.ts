/**
 * Messages of the local SQS (`local-aws-sqs`, which keeps its queues in memory) kept in a journal
 * under the local mode's data folder, so that a stop of any kind (Ctrl-C, SIGKILL) loses no
 * message the stand-in accepted: every message put into a queue (a send, a move to a dead-letter
 * queue, a move task) is written before the stand-in answers, every delete or purge removes it,
 * and on the next start each message still held goes back into its queue under its own message
 * id, visible at once (as after a visibility timeout: SQS delivers at least once, and every
 * consumer of these queues is idempotent).
 *
 * Why here and not elsewhere: the decide path, the targets and `decide replay` reach these queues
 * only through the SQS API, so a journal behind that API makes every queue durable (intake, batch
 * lane, targets, every dead-letter queue) without a second code path; recovering from the table
 * alone could not bring back items that never reached it.
 *
 * The stand-in's queue objects are instrumented where its API has them public (`setRecord`,
 * `delete`, `clearRecords`); its receipt handles carry the message id (base64 of a UUID and a
 * JSON object), which is how a delete names the message. Kept while a message lives, the entry
 * also gives its first-sent time to the SentTimestamp correction (`sqs-server.ts`).
 */
import type { createRequestHandler } from "local-aws-sqs";
import { JournaledMap } from "../journal.ts";

type SqsService = ReturnType<typeof createRequestHandler>["service"];
type StandInQueue = SqsService["Queues"][number];

/** What goes back into a queue: the fields of a send that make the message. */
interface MessageInput {
  readonly MessageBody: string;
  readonly MessageAttributes?: unknown;
  readonly MessageSystemAttributes?: unknown;
  readonly MessageGroupId?: string;
  readonly MessageDeduplicationId?: string;
}

/** A message as kept: its queue, when it was first sent, when it becomes visible, and its input. */
export interface KeptMessage {
  readonly queue: string;
  readonly sentAt: number;
  readonly visibleAt: number;
  readonly input: MessageInput;
}

/** The messages the stand-in holds, kept on disk when a path is given. */
export interface QueuePersistence {
  /** Instruments queues created since the last call and puts their kept messages back. */
  adopt(service: SqsService): void;
  /** When the message was first sent (kept across moves), while it lives. */
  firstSent(messageId: string): number | undefined;
  /** Messages kept, by queue name (for the start's report). */
  counts(): Record<string, number>;
  close(): void;
}

/** The message id inside one of the stand-in's receipt handles, if it is one. */
export function messageIdOfReceipt(receiptHandle: string): string | undefined {
  try {
    const text = Buffer.from(receiptHandle, "base64").toString("utf8");
    const parsed = JSON.parse(text.slice(text.indexOf("{"))) as { MessageId?: unknown };
    return typeof parsed.MessageId === "string" ? parsed.MessageId : undefined;
  } catch {
    return undefined;
  }
}

function inputOf(input: Record<string, unknown>): MessageInput {
  const kept: Record<string, unknown> = { MessageBody: String(input.MessageBody) };
  for (const field of [
    "MessageAttributes",
    "MessageSystemAttributes",
    "MessageGroupId",
    "MessageDeduplicationId",
  ])
    if (input[field] !== undefined) kept[field] = input[field];
  return kept as unknown as MessageInput;
}

/**
 * Keeps the stand-in's messages in `path` (a journal; in memory when unset). Messages kept by an
 * earlier run go back into their queues as each queue is created again.
 */
export function persistQueues(path?: string): QueuePersistence {
  const kept = JournaledMap.open<KeptMessage>(path);
  const adopted = new WeakSet<StandInQueue>();

  const instrument = (queue: StandInQueue) => {
    const name = queue.QueueName;
    const setRecord = queue.setRecord;
    queue.setRecord = (input: Record<string, unknown>, messageId?: string) => {
      const made = setRecord(input, messageId);
      const id: string = made.record.MessageId;
      const now = Date.now();
      const delay = Number(input.DelaySeconds);
      kept.set(id, {
        queue: name,
        // A move keeps the message id, and the first send's time (as SQS keeps it on a standard queue).
        sentAt: kept.get(id)?.sentAt ?? now,
        visibleAt: now + (Number.isFinite(delay) ? delay : queue.DelaySeconds) * 1000,
        input: inputOf(input),
      });
      return made;
    };
    const remove = queue.delete.bind(queue);
    queue.delete = (receiptHandle: string) => {
      const removed = remove(receiptHandle);
      const id = messageIdOfReceipt(receiptHandle);
      // A handle from before a move names a message that lives in another queue now.
      if (removed && id !== undefined && kept.get(id)?.queue === name) kept.delete(id);
      return removed;
    };
    const clear = queue.clearRecords.bind(queue);
    queue.clearRecords = () => {
      clear();
      for (const [id, message] of [...kept.entries()]) if (message.queue === name) kept.delete(id);
    };
    // Back into the queue, through the stand-in's own setRecord (already kept: not written again).
    for (const [id, message] of kept.entries()) {
      if (message.queue !== name) continue;
      const delaySeconds = Math.max(0, Math.ceil((message.visibleAt - Date.now()) / 1000));
      setRecord({ ...message.input, DelaySeconds: delaySeconds }, id);
    }
  };

  return {
    adopt(service) {
      for (const queue of service.Queues) {
        if (adopted.has(queue)) continue;
        adopted.add(queue);
        instrument(queue);
      }
    },
    firstSent: (messageId) => kept.get(messageId)?.sentAt,
    counts() {
      const counts: Record<string, number> = {};
      for (const [, message] of kept.entries()) counts[message.queue] = (counts[message.queue] ?? 0) + 1;
      return counts;
    },
    close: () => kept.close(),
  };
}
