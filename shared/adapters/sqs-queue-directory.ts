/**
 * The queue directory on SQS: a queue by its ARN (GetQueueUrl, so it works against the local
 * stand-in too), and the dead-letter queue its redrive policy names (GetQueueAttributes). Both
 * are looked up once per queue and kept; a failed lookup is forgotten, so the next one tries again.
 */
import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { QueueDirectory } from "../domain/message-queue.ts";
import { SqsQueue } from "./sqs-queue.ts";

/** Name and account of a queue ARN (`arn:aws:sqs:<region>:<account>:<name>`); throws on anything else. */
export function parseQueueArn(arn: string): { account: string; name: string } {
  const match = /^arn:[\w-]+:sqs:[\w-]+:(\d{12}):([\w-]{1,80}(?:\.fifo)?)$/.exec(arn);
  if (!match) throw new Error(`not an SQS queue ARN: "${arn}"`);
  return { account: match[1]!, name: match[2]! };
}

/** Queues by ARN on one SQS client. */
export class SqsQueueDirectory implements QueueDirectory {
  private readonly queues = new Map<string, Promise<SqsQueue>>();
  private readonly deadLetters = new Map<string, Promise<SqsQueue | undefined>>();

  constructor(readonly sqs: SQSClient) {}

  queue(arn: string): Promise<SqsQueue> {
    return remembered(this.queues, arn, async () => {
      const { account, name } = parseQueueArn(arn);
      const output = await this.sqs.send(
        new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }),
      );
      return new SqsQueue(this.sqs, output.QueueUrl!);
    });
  }

  deadLetterQueueOf(arn: string): Promise<SqsQueue | undefined> {
    return remembered(this.deadLetters, arn, async () => {
      const source = await this.queue(arn);
      const output = await this.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: source.url, AttributeNames: ["RedrivePolicy"] }),
      );
      const policy = output.Attributes?.RedrivePolicy;
      if (!policy) return undefined;
      return this.queue((JSON.parse(policy) as { deadLetterTargetArn: string }).deadLetterTargetArn);
    });
  }
}

/** `cache.get(key)`, else `load()` kept under `key` unless it fails. */
function remembered<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let found = cache.get(key);
  if (!found) {
    found = load();
    cache.set(key, found);
    found.catch(() => cache.delete(key));
  }
  return found;
}
