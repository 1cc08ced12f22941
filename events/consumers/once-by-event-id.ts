/**
 * A sample consumer of the pipeline's events, to copy: an SQS-triggered Lambda behind your own
 * EventBridge rule (for example on "Decision Made"). The pipeline sends each event at least once,
 * so the same event can arrive twice, with the same `detail.eventId` (the envelope's `id` differs
 * on every send and cannot be used). The consumer applies each event once by that id: a
 * conditional write claims the id in a DynamoDB table before the effect, marks it done after,
 * and gives the claim back when the effect fails, so the redelivery applies it then. A claim
 * whose worker died expires after `leaseMs` and the next delivery takes it over.
 *
 * The table: partition key `eventId` (string); turn on TTL on `expiresAt` to forget old ids.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";

/** A pipeline event as an SQS target receives it (the EventBridge envelope). */
export interface PipelineEventEnvelope {
  readonly "detail-type": string;
  readonly detail: { readonly eventId: string } & Record<string, unknown>;
}

/** What happened to one delivery. */
export type Delivery = "applied" | "duplicate";

/** Options of {@link onceByEventId}. */
export interface OnceOptions {
  /** The table of event ids seen. */
  readonly table: string;
  /** How long a claim holds before another delivery may take it over. @default 60000 */
  readonly leaseMs?: number;
  /** How long a done id is kept, for TTL. @default 14 days (longer than any redelivery) */
  readonly keepDays?: number;
  /** The clock. @default Date.now */
  readonly now?: () => number;
}

/** An event is being applied by another worker right now: let the queue deliver it again later. */
export class EventInProgressError extends Error {
  override name = "EventInProgressError";
}

/** Wraps `apply` so that each event id is applied once, however often it is delivered. */
export function onceByEventId(
  client: DynamoDBClient,
  apply: (event: PipelineEventEnvelope) => Promise<void>,
  options: OnceOptions,
): (event: PipelineEventEnvelope) => Promise<Delivery> {
  const leaseMs = options.leaseMs ?? 60_000;
  const keepSeconds = (options.keepDays ?? 14) * 86_400;
  const now = options.now ?? Date.now;
  const key = (eventId: string) => ({ eventId: { S: eventId } });
  return async (event) => {
    const eventId = event.detail?.eventId;
    if (typeof eventId !== "string" || eventId === "") throw new TypeError("the event has no detail.eventId");
    const at = now();
    try {
      // Claim: a new id, or a claim whose worker's lease ran out.
      await client.send(
        new PutItemCommand({
          TableName: options.table,
          Item: {
            ...key(eventId),
            status: { S: "claimed" },
            leaseUntil: { N: String(at + leaseMs) },
            expiresAt: { N: String(Math.floor(at / 1000) + keepSeconds) },
          },
          ConditionExpression: "attribute_not_exists(eventId) OR (#s = :claimed AND leaseUntil < :now)",
          ExpressionAttributeNames: { "#s": "status" },
          ExpressionAttributeValues: { ":claimed": { S: "claimed" }, ":now": { N: String(at) } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      if (await isDone(client, options.table, eventId)) return "duplicate";
      throw new EventInProgressError(`event ${eventId} is being applied by another worker`);
    }
    try {
      await apply(event);
    } catch (error) {
      // Give the claim back: the redelivery applies the event.
      await client.send(new DeleteItemCommand({ TableName: options.table, Key: key(eventId) }));
      throw error;
    }
    await client.send(
      new UpdateItemCommand({
        TableName: options.table,
        Key: key(eventId),
        UpdateExpression: "SET #s = :done REMOVE leaseUntil",
        ExpressionAttributeNames: { "#s": "status" },
        ExpressionAttributeValues: { ":done": { S: "done" } },
      }),
    );
    return "applied";
  };
}

async function isDone(client: DynamoDBClient, table: string, eventId: string): Promise<boolean> {
  const { Item } = await client.send(
    new GetItemCommand({ TableName: table, Key: { eventId: { S: eventId } }, ConsistentRead: true }),
  );
  return Item?.status?.S === "done";
}

/**
 * The Lambda handler shape for an SQS queue that your rule targets: each record's body is one
 * event; a record that fails (or is in progress elsewhere) is reported back for redelivery.
 */
export function sqsHandler(consume: (event: PipelineEventEnvelope) => Promise<Delivery>) {
  return async (input: { Records: { messageId: string; body: string }[] }) => {
    const batchItemFailures: { itemIdentifier: string }[] = [];
    for (const record of input.Records) {
      try {
        await consume(JSON.parse(record.body) as PipelineEventEnvelope);
      } catch {
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}
