/**
 * A rule target as deployed, on the local stand-ins: an SQS queue that a bus rule fills with the
 * matching events, and a poller that feeds it to the target function in batches, as the Lambda
 * service's event source mapping does.
 */
import type { Context, SQSEvent } from "aws-lambda";
import type { EventPattern } from "../../shared/domain/event-pattern.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import type { LocalEventBus } from "./event-bus.ts";
import { type SqsPoller, startSqsPoller } from "./sqs-poller.ts";

/** Options of {@link startTargetQueue}. */
export interface TargetQueueOptions {
  /** Creates a queue with SQS attributes. */
  readonly createQueue: (name: string, attributes: Record<string, string>) => Promise<MessageQueue>;
  readonly bus: LocalEventBus;
  /** Queue and rule name. */
  readonly name: string;
  readonly pattern: EventPattern;
  readonly handler: (event: SQSEvent, context: Context) => Promise<unknown>;
  readonly visibilityTimeoutSeconds: number;
  readonly batchSize?: number;
  /** Receives before a message goes to `deadLetterArn`. */
  readonly redrive?: { maxReceiveCount: number; deadLetterArn: string };
}

/** The queue and its consumer. */
export interface TargetQueue {
  readonly url: string;
  readonly queue: MessageQueue;
  readonly poller: SqsPoller;
}

/** Creates the queue, the rule that fills it and the poller that drains it. */
export async function startTargetQueue(options: TargetQueueOptions): Promise<TargetQueue> {
  const queue = await options.createQueue(options.name, {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    ...(options.redrive
      ? {
          RedrivePolicy: JSON.stringify({
            maxReceiveCount: options.redrive.maxReceiveCount,
            deadLetterTargetArn: options.redrive.deadLetterArn,
          }),
        }
      : {}),
  });
  options.bus.addRule({
    name: options.name,
    pattern: options.pattern,
    target: async (event) => void (await queue.send(JSON.stringify(event))),
  });
  const poller = startSqsPoller({
    queue,
    queueArn: `arn:aws:sqs:us-east-1:123456789012:${options.name}`,
    handler: options.handler,
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
    functionName: options.name,
  });
  return { url: queue.url, queue, poller };
}
