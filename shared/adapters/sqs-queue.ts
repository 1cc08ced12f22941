/**
 * The queue port on Amazon SQS (or the local stand-in behind the same API).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from "@aws-sdk/client-sqs";
import {
  MAX_BATCH,
  type MessageQueue,
  type OutgoingMessage,
  type QueueMessage,
  type ReceiveOptions,
  type SendOptions,
} from "../domain/message-queue.ts";

/** One SQS queue. */
export class SqsQueue implements MessageQueue {
  constructor(
    readonly sqs: SQSClient,
    readonly url: string,
  ) {}

  /** Creates the queue (or finds it when it exists with the same attributes). */
  static async create(
    sqs: SQSClient,
    name: string,
    attributes: Record<string, string> = {},
  ): Promise<SqsQueue> {
    const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return new SqsQueue(sqs, created.QueueUrl!);
  }

  /** The queue's ARN. */
  async arn(): Promise<string> {
    const output = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: this.url, AttributeNames: ["QueueArn"] }),
    );
    return output.Attributes?.QueueArn ?? "";
  }

  async send(body: string, options: SendOptions = {}): Promise<string> {
    const { delaySeconds, attributes } = options;
    const output = await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.url,
        MessageBody: body,
        ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}),
        ...(attributes
          ? {
              MessageAttributes: Object.fromEntries(
                Object.entries(attributes).map(([name, value]) => [
                  name,
                  { DataType: "String", StringValue: value },
                ]),
              ),
            }
          : {}),
      }),
    );
    return output.MessageId ?? "";
  }

  async sendBatch(messages: readonly OutgoingMessage[]): Promise<{ id: string; reason: string }[]> {
    if (messages.length > MAX_BATCH) throw new RangeError(`at most ${MAX_BATCH} messages per batch`);
    const output = await this.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: this.url,
        // SQS entry ids allow only [A-Za-z0-9_-]: send by position, answer with the caller's ids.
        Entries: messages.map((message, i) => ({ Id: String(i), MessageBody: message.body })),
      }),
    );
    return (output.Failed ?? []).map((failure) => ({
      id: messages[Number(failure.Id)]!.id,
      reason: failure.Code ?? failure.Message ?? "failed",
    }));
  }

  async receive(options: ReceiveOptions = {}): Promise<QueueMessage[]> {
    const output = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.url,
        MaxNumberOfMessages: options.max ?? MAX_BATCH,
        WaitTimeSeconds: options.waitSeconds ?? 0,
        ...(options.visibilitySeconds !== undefined ? { VisibilityTimeout: options.visibilitySeconds } : {}),
        MessageSystemAttributeNames: ["All"],
        // The older name of the same request: the local stand-in reads only this one, and without
        // it answers no SentTimestamp or receive count (every letter then looked sent just now).
        AttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      }),
      options.signal ? { abortSignal: options.signal } : {},
    );
    return (output.Messages ?? []).map((message) => ({
      messageId: message.MessageId!,
      body: message.Body ?? "",
      receiptHandle: message.ReceiptHandle!,
      sentAt: Number(message.Attributes?.SentTimestamp ?? Date.now()),
      receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
      attributes: Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {}).flatMap(([name, value]) =>
          value.StringValue === undefined ? [] : [[name, value.StringValue]],
        ),
      ),
    }));
  }

  async delete(receiptHandles: readonly string[]): Promise<void> {
    for (const entries of batchesOf(receiptHandles))
      await this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: this.url, Entries: entries }));
  }

  async release(receiptHandles: readonly string[]): Promise<void> {
    for (const entries of batchesOf(receiptHandles))
      await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.url,
          Entries: entries.map((entry) => ({ ...entry, VisibilityTimeout: 0 })),
        }),
      );
  }

  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.url,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: seconds,
      }),
    );
  }

  async depth(): Promise<{ visible: number; inFlight: number }> {
    const output = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: this.url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return {
      visible: Number(output.Attributes?.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(output.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    };
  }
}

/** Receipt handles as batch entries, at most {@link MAX_BATCH} per batch. */
function batchesOf(receiptHandles: readonly string[]): { Id: string; ReceiptHandle: string }[][] {
  const batches = [];
  for (let i = 0; i < receiptHandles.length; i += MAX_BATCH)
    batches.push(
      receiptHandles.slice(i, i + MAX_BATCH).map((handle, j) => ({ Id: String(j), ReceiptHandle: handle })),
    );
  return batches;
}

/** Starts SQS's own redrive of a whole dead-letter queue back to its source (or `destinationArn`). */
export async function redriveAll(sqs: SQSClient, dlqArn: string, destinationArn?: string): Promise<string> {
  const output = await sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: dlqArn,
      ...(destinationArn ? { DestinationArn: destinationArn } : {}),
    }),
  );
  return output.TaskHandle ?? "";
}
