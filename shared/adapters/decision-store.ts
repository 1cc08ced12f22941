/**
 * The decisions table: conditional writes keyed by item and policy version, the outbox flag that
 * makes "Decision Made" go out exactly once, and the status index behind the review queue.
 * Translates DynamoDB errors into pipeline errors; nothing above it imports the SDK.
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { type DecisionRecord, type RecordStatus, recordKey } from "../decision-record.ts";
import { STATUS_INDEX } from "./decisions-table.ts";
import { StoreUnavailableError } from "./errors.ts";

type Key = Pick<DecisionRecord, "itemId" | "policyId" | "policyVersion">;

/** The outcome of {@link DecisionStore.create}. */
export interface CreateOutcome {
  /** False when a record already existed (a duplicate or a race lost): `record` is that one. */
  readonly created: boolean;
  readonly record: DecisionRecord;
}

function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string })?.name === "ConditionalCheckFailedException"
  );
}

/** Reads and writes decision records. */
export class DecisionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isConditionFailure(error)) throw error;
      throw new StoreUnavailableError(`decisions table ${what} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** The record for an item and policy version, read consistently. */
  async get(key: Key): Promise<DecisionRecord | undefined> {
    const output = await this.call("get", () =>
      this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: recordKey(key.itemId, key.policyId, key.policyVersion),
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item ? stripKeys(output.Item) : undefined;
  }

  /** Writes the record unless one exists for the same item and policy version. */
  async create(record: DecisionRecord): Promise<CreateOutcome> {
    try {
      await this.call("put", () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...recordKey(record.itemId, record.policyId, record.policyVersion), ...record },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
      return { created: true, record };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const existing = await this.get(record);
      if (!existing)
        throw new StoreUnavailableError(`record ${record.itemId} vanished after a conditional write failed`);
      return { created: false, record: existing };
    }
  }

  /**
   * Claims the right to publish the record's event for `leaseMs`. Only one worker holds it at a
   * time; a claim left by a crashed worker expires, so redelivery can repair the outbox.
   */
  async claimPublish(key: Key, leaseMs: number, now = Date.now()): Promise<boolean> {
    try {
      await this.call("claim", () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: recordKey(key.itemId, key.policyId, key.policyVersion),
            UpdateExpression: "SET publishLeaseUntil = :until",
            ConditionExpression:
              "attribute_exists(pk) AND eventPublished = :false AND (attribute_not_exists(publishLeaseUntil) OR publishLeaseUntil < :now)",
            ExpressionAttributeValues: { ":until": now + leaseMs, ":now": now, ":false": false },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Records that the event went out. */
  async markPublished(key: Key, now = new Date()): Promise<void> {
    await this.call("mark published", () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: recordKey(key.itemId, key.policyId, key.policyVersion),
          UpdateExpression: "SET eventPublished = :true, updatedAt = :now REMOVE publishLeaseUntil",
          ExpressionAttributeValues: { ":true": true, ":now": now.toISOString() },
        }),
      ),
    );
  }

  /**
   * Moves a record from one status to another, with extra fields; false when it was not in
   * `from` (already moved: the caller's retry or a duplicate).
   */
  async transition(
    key: Key,
    from: RecordStatus,
    to: RecordStatus,
    fields: Record<string, unknown> = {},
    now = new Date(),
  ): Promise<boolean> {
    const names: Record<string, string> = { "#status": "status", "#updatedAt": "updatedAt" };
    const values: Record<string, unknown> = { ":from": from, ":to": to, ":now": now.toISOString() };
    const sets = ["#status = :to", "#updatedAt = :now"];
    for (const [i, [field, value]] of Object.entries(fields).entries()) {
      names[`#f${i}`] = field;
      values[`:f${i}`] = value;
      sets.push(`#f${i} = :f${i}`);
    }
    try {
      await this.call("transition", () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: recordKey(key.itemId, key.policyId, key.policyVersion),
            UpdateExpression: `SET ${sets.join(", ")}`,
            ConditionExpression: "#status = :from",
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Every record in `status` created at or after `since` (ISO time), across pages. */
  async listSince(status: RecordStatus, since: string): Promise<DecisionRecord[]> {
    const records: DecisionRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const output = await this.call("query", () =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: STATUS_INDEX,
            KeyConditionExpression: "#status = :status AND createdAt >= :since",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: { ":status": status, ":since": since },
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      records.push(...(output.Items ?? []).map(stripKeys));
      startKey = output.LastEvaluatedKey;
    } while (startKey);
    return records;
  }

  /** Records in `status`, oldest first (the review queue for `pending_review`). */
  async listByStatus(status: RecordStatus, limit = 50): Promise<DecisionRecord[]> {
    const output = await this.call("query", () =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: STATUS_INDEX,
          KeyConditionExpression: "#status = :status",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":status": status },
          Limit: limit,
        }),
      ),
    );
    return (output.Items ?? []).map(stripKeys);
  }
  /**
   * Notes why a message failed (best effort), keyed by its SQS message id, which SQS keeps when
   * it moves the message to the dead-letter queue: replay filters on it.
   */
  async noteFailure(messageId: string, reason: string, now = new Date()): Promise<void> {
    await this.call("note failure", () =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: `FAILURE#${messageId}`,
            sk: "LAST",
            reason: reason.slice(0, 1000),
            at: now.toISOString(),
          },
        }),
      ),
    );
  }

  /** The last failure noted for a message, if any. */
  async failureOf(messageId: string): Promise<{ reason: string; at: string } | undefined> {
    const output = await this.call("get failure", () =>
      this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { pk: `FAILURE#${messageId}`, sk: "LAST" } }),
      ),
    );
    return output.Item ? { reason: String(output.Item.reason), at: String(output.Item.at) } : undefined;
  }
}

function stripKeys(item: Record<string, unknown>): DecisionRecord {
  const { pk: _pk, sk: _sk, publishLeaseUntil: _lease, ...record } = item;
  return record as unknown as DecisionRecord;
}
