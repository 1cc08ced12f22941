/**
 * The queue port: what the use cases (publish, replay, status) and the local mode need from a
 * message queue. `shared/adapters/sqs-queue.ts` implements it on SQS (the real one or the local
 * stand-in).
 */

/** A received message. */
export interface QueueMessage {
  readonly messageId: string;
  readonly body: string;
  /** Handle for delete and release; valid until the visibility timeout ends. */
  readonly receiptHandle: string;
  /** When it was first sent (epoch milliseconds). */
  readonly sentAt: number;
  readonly receiveCount: number;
  /** Its message attributes with string values (EventBridge's dead letters carry ERROR_CODE and the like). */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** One entry of a batch send: `id` is the caller's, echoed back when the entry fails. */
export interface OutgoingMessage {
  readonly id: string;
  readonly body: string;
}

/** Options of {@link MessageQueue.send}. */
export interface SendOptions {
  /** Seconds before receivers see it (0 to 900). @default 0 */
  readonly delaySeconds?: number;
  /** String message attributes (EventBridge's dead letters carry ERROR_CODE and the like). */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** Options of {@link MessageQueue.receive}. */
export interface ReceiveOptions {
  /** At most 10. @default 10 */
  readonly max?: number;
  /** Long-poll wait in seconds. @default 0 */
  readonly waitSeconds?: number;
  /** How long received messages stay hidden. @default the queue's */
  readonly visibilitySeconds?: number;
  readonly signal?: AbortSignal;
}

/** A message queue. */
export interface MessageQueue {
  /** The queue's address (an SQS queue URL). */
  readonly url: string;
  /**
   * Sends one message; returns its message id. `delaySeconds` holds it back from receivers
   * (SQS allows 0 to 900); `attributes` travel as string message attributes.
   */
  send(body: string, options?: SendOptions): Promise<string>;
  /** Sends up to 10 messages in one call; returns the entries that failed, with the reason. */
  sendBatch(messages: readonly OutgoingMessage[]): Promise<{ id: string; reason: string }[]>;
  receive(options?: ReceiveOptions): Promise<QueueMessage[]>;
  /** Deletes received messages by receipt handle (any number; batched by 10). */
  delete(receiptHandles: readonly string[]): Promise<void>;
  /** Makes received messages visible again at once (any number; batched by 10). */
  release(receiptHandles: readonly string[]): Promise<void>;
  /** Keeps a received message hidden for `seconds` from now (whole seconds, at most 12 hours). */
  changeVisibility(receiptHandle: string, seconds: number): Promise<void>;
  /** Approximate counts: waiting to be received, and received but not yet deleted. */
  depth(): Promise<{ visible: number; inFlight: number }>;
}

/**
 * Finds queues by ARN: the queue an SQS record came from (its `eventSourceARN`), and the
 * dead-letter queue that queue's redrive policy names.
 */
export interface QueueDirectory {
  queue(arn: string): Promise<MessageQueue>;
  /** Undefined when the queue has no redrive policy. */
  deadLetterQueueOf(arn: string): Promise<MessageQueue | undefined>;
}

/** The largest batch SQS (and PutEvents) take in one call. */
export const MAX_BATCH = 10;
