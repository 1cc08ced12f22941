/**
 * Publishes pipeline events to EventBridge: at most 10 entries per PutEvents call, and only the
 * entries that failed are retried (PutEvents reports failures per entry); a bus that does not
 * exist is not retried.
 */
import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
} from "@aws-sdk/client-eventbridge";
import { backoff } from "../domain/backoff/backoff.ts";
import { EventBusNotFoundError, EventPublishError } from "../domain/errors.ts";
import { EVENT_SOURCE, type PipelineEvent, type PublishesEvents } from "../domain/events.ts";
import { MAX_BATCH } from "../domain/message-queue.ts";

/** PutEvents takes at most this many entries per call. */
export const PUT_EVENTS_BATCH = MAX_BATCH;

/** Options of {@link EventPublisher}; the numbers are required (the topology's `EVENT_PUBLISHING`). */
export interface EventPublisherOptions {
  /** Tries per entry. */
  readonly attempts: number;
  /** First backoff; doubles each try, with full jitter. */
  readonly baseDelayMs: number;
  /** The events' source. @default "decision-pipeline" */
  readonly source?: string;
}

/** Publishes to one event bus. */
export class EventPublisher implements PublishesEvents {
  /** Tries per entry. */
  readonly attempts: number;
  /** First backoff. */
  readonly baseDelayMs: number;
  /** The events' source. */
  readonly source: string;

  constructor(
    private readonly client: EventBridgeClient,
    readonly busName: string,
    options: EventPublisherOptions,
  ) {
    this.attempts = options.attempts;
    this.baseDelayMs = options.baseDelayMs;
    this.source = options.source ?? EVENT_SOURCE;
  }

  /** Publishes every event or throws {@link EventPublishError} naming those that failed. */
  async publish(events: readonly PipelineEvent[]): Promise<void> {
    for (let start = 0; start < events.length; start += PUT_EVENTS_BATCH) {
      await this.publishBatch(events.slice(start, start + PUT_EVENTS_BATCH));
    }
  }

  private async publishBatch(batch: readonly PipelineEvent[]): Promise<void> {
    let pending = batch.map((event) => ({ event, entry: this.entryOf(event) }));
    let lastError = "";
    for (let attempt = 1; attempt <= this.attempts && pending.length > 0; attempt++) {
      await backoff(attempt, this.baseDelayMs);
      try {
        const output = await this.client.send(new PutEventsCommand({ Entries: pending.map((p) => p.entry) }));
        const results = output.Entries ?? [];
        const failed = pending.map((_, i) => i).filter((i) => !results[i]?.EventId || results[i]?.ErrorCode);
        lastError = failed.map((i) => results[i]?.ErrorCode ?? "no event id").join(", ");
        pending = failed.map((i) => pending[i]!);
      } catch (error) {
        if ((error as Error).name === "ResourceNotFoundException")
          throw new EventBusNotFoundError(this.busName, { cause: error });
        lastError = (error as Error).message;
      }
    }
    if (pending.length > 0) {
      throw new EventPublishError(
        `${pending.length} of ${batch.length} events not published after ${this.attempts} tries (${lastError}): ` +
          pending.map((p) => p.event.eventKey).join(", "),
      );
    }
  }

  private entryOf(event: PipelineEvent): PutEventsRequestEntry {
    return {
      Source: event.source ?? this.source,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
      EventBusName: this.busName,
    };
  }
}
