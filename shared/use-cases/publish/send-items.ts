/**
 * Sending validated items upstream of the pipeline: to the intake queue (SendMessageBatch, 10 at
 * a time) or as "Decision Requested" events to a bus (PutEvents, 10 at a time), retrying only the
 * entries that failed. Ids already sent are skipped (resume), and each sent batch is reported so
 * the caller can record it.
 */
import { backoff } from "../../domain/backoff/backoff.ts";
import { DetailType, type PublishesEvents } from "../../domain/events.ts";
import { MAX_BATCH, type MessageQueue } from "../../domain/message-queue.ts";
import type { PublishableItem } from "./read-items.ts";

/** Where items go. */
export type PublishTarget =
  | { readonly kind: "queue"; readonly queue: MessageQueue }
  | { readonly kind: "bus"; readonly publisher: PublishesEvents };

/** Options of {@link sendItems}. */
export interface SendOptions {
  /** Tries per entry. @default 5 */
  readonly attempts?: number;
  /** First backoff. @default 100 */
  readonly baseDelayMs?: number;
  /** Called after each batch is accepted, with its ids. */
  readonly onBatch?: (ids: string[]) => void | Promise<void>;
}

/** Sends `items` in batches of 10; throws naming the ids that could not be sent. */
export async function sendItems(
  items: readonly PublishableItem[],
  target: PublishTarget,
  options: SendOptions = {},
): Promise<void> {
  for (let start = 0; start < items.length; start += MAX_BATCH) {
    const batch = items.slice(start, start + MAX_BATCH);
    if (target.kind === "bus") {
      // The publisher retries failed entries itself.
      await target.publisher.publish(
        batch.map((item) => ({
          detailType: DetailType.requested,
          eventKey: item.id,
          detail: JSON.parse(item.body) as Record<string, unknown>,
        })),
      );
    } else {
      await sendBatch(batch, target, options);
    }
    await options.onBatch?.(batch.map((item) => item.id));
  }
}

async function sendBatch(
  batch: readonly PublishableItem[],
  target: Extract<PublishTarget, { kind: "queue" }>,
  options: SendOptions,
): Promise<void> {
  let pending = [...batch];
  let lastError = "";
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; attempt <= attempts && pending.length > 0; attempt++) {
    await backoff(attempt, options.baseDelayMs ?? 100);
    try {
      const failures = await target.queue.sendBatch(
        pending.map((item) => ({ id: item.id, body: item.body })),
      );
      const failed = new Set(failures.map((f) => f.id));
      lastError = failures.map((f) => f.reason).join(", ");
      pending = pending.filter((item) => failed.has(item.id));
    } catch (error) {
      lastError = (error as Error).message;
    }
  }
  if (pending.length > 0) {
    throw new Error(
      `${pending.length} items not sent after ${attempts} tries (${lastError}): ${pending.map((p) => p.id).join(", ")}`,
    );
  }
}
