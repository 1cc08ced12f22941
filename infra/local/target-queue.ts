/**
 * A rule target as deployed, on the local stand-ins: an SQS queue that a bus rule fills with the
 * matching events, and a poller that feeds it to the target function in batches, as the Lambda
 * service's event source mapping does.
 */
import type { Context, SQSEvent } from "aws-lambda";
import type { EventPattern } from "../../shared/domain/event-pattern.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { EVENT_SOURCE_MAPPINGS } from "../../shared/domain/topology/event-source-mapping.ts";
import type { BusEvent, LocalEventBus } from "./event-bus.ts";
import { LOCAL_ARN, redriveTo } from "./local-queues.ts";
import { type SqsPoller, startSqsPoller } from "./sqs/sqs-poller.ts";

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
  /** Receives before a message goes to the queue's own dead-letter queue (`<name>-dlq`). */
  readonly maxReceiveCount: number;
  /** Where the rule puts an event it could not deliver to the queue. */
  readonly ruleDeadLetter: (event: BusEvent, error: string) => Promise<void>;
}

/** The queue, its dead-letter queue and its consumer. */
export interface TargetQueue {
  readonly url: string;
  readonly queue: MessageQueue;
  /** The queue's own dead letters (after the receive limit). */
  readonly deadLetters: MessageQueue;
  readonly poller: SqsPoller;
}

/** Creates the queue with its dead-letter queue, the rule that fills it and the poller that drains it. */
export async function startTargetQueue(options: TargetQueueOptions): Promise<TargetQueue> {
  const deadLetters = await options.createQueue(`${options.name}-dlq`, {});
  const queue = await options.createQueue(options.name, {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds),
    ...redriveTo(`${options.name}-dlq`, options.maxReceiveCount),
  });
  options.bus.addRule({
    name: options.name,
    pattern: options.pattern,
    target: async (event) => void (await queue.send(JSON.stringify(event))),
    deadLetter: options.ruleDeadLetter,
  });
  const poller = startSqsPoller({
    queue,
    queueArn: `${LOCAL_ARN}:${options.name}`,
    handler: options.handler,
    mapping: EVENT_SOURCE_MAPPINGS.target,
    functionName: options.name,
  });
  return { url: queue.url, queue, deadLetters, poller };
}
