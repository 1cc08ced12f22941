/**
 * The decisions table on DynamoDB: conditional writes keyed by item and policy version, the outbox
 * flag and publish lease, the targets' at-most-once ledger, and the index attributes that list a
 * record by time and, while it waits for review or once reviewed, in its list (a status change
 * moves it between lists in the same write; bounded reads: `dynamodb-decision-reads.ts`). How a
 * record is stored as an item: `decision-item.ts`; the messages' failure notes beside the records:
 * `dynamodb-failure-notes.ts`. ValidationException: permanent
 * (StoreRejectedError), else it may pass (`dynamodb-calls.ts`). Nothing above imports the SDK.
 */
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { type DecisionRecord, type RecordStatus, recordKey } from "../../domain/decision-record.ts";
import {
  type CreateOutcome,
  conditionOf,
  type DecisionFilter,
  type DecisionPage,
  type DecisionSample,
  type DecisionStore,
  type RecordKey as Key,
  type PendingSummary,
  type RecordPage,
  type ReviewWrite,
  type TransitionCondition,
} from "../../domain/decision-store.ts";
import { StoreUnavailableError } from "../../domain/errors.ts";
import type { ReviewClaim } from "../../domain/review/review.ts";
import { indexAttributesOf } from "./decision-index-keys.ts";
import { stripKeys, toItem } from "./decision-item.ts";
import { getMany } from "./dynamodb-batch-get.ts";
import { tableCall } from "./dynamodb-calls.ts";
import * as reads from "./dynamodb-decision-reads.ts";
import * as failures from "./dynamodb-failure-notes.ts";
import * as reviews from "./dynamodb-review-writes.ts";
import { transitionUpdate } from "./dynamodb-transition.ts";

function isConditionFailure(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string })?.name === "ConditionalCheckFailedException"
  );
}

/** The decision store on a DynamoDB table. */
export class DynamoDbDecisionStore implements DecisionStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  private call<T>(what: string, run: () => Promise<T>): Promise<T> {
    return tableCall(what, run, isConditionFailure);
  }

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

  async latest(itemId: string, policyId: string): Promise<DecisionRecord | undefined> {
    const output = await this.call("query", () =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: "pk = :pk AND sk BETWEEN :first AND :last",
          ExpressionAttributeValues: {
            ":pk": recordKey(itemId, policyId, 1).pk,
            ":first": recordKey(itemId, policyId, 1).sk,
            ":last": recordKey(itemId, policyId, 999_999).sk,
          },
          ScanIndexForward: false,
          Limit: 1,
          ConsistentRead: true,
        }),
      ),
    );
    const item = output.Items?.[0];
    return item ? stripKeys(item) : undefined;
  }

  async create(record: DecisionRecord, publishLeaseUntil?: number): Promise<CreateOutcome> {
    try {
      await this.call("put", () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...recordKey(record.itemId, record.policyId, record.policyVersion),
              ...toItem(record),
              ...indexAttributesOf(record),
              ...(publishLeaseUntil === undefined ? {} : { publishLeaseUntil }),
            },
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

  /** Runs a conditional update of the record at `key`; false when its condition did not hold. */
  private async updateIf(
    what: string,
    key: Key,
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], "TableName" | "Key">,
  ): Promise<boolean> {
    try {
      await this.call(what, () =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: recordKey(key.itemId, key.policyId, key.policyVersion),
            ...update,
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async claimPublish(key: Key, leaseMs: number, now = Date.now()): Promise<boolean> {
    return this.updateIf("claim", key, {
      UpdateExpression: "SET publishLeaseUntil = :until",
      ConditionExpression:
        "attribute_exists(pk) AND eventPublished = :false AND (attribute_not_exists(publishLeaseUntil) OR publishLeaseUntil < :now)",
      ExpressionAttributeValues: { ":until": now + leaseMs, ":now": now, ":false": false },
    });
  }

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

  async transition(
    key: Key,
    from: RecordStatus | TransitionCondition,
    to: RecordStatus,
    fields: Record<string, unknown> = {},
    now = new Date(),
  ): Promise<boolean> {
    return this.updateIf("transition", key, transitionUpdate(key, conditionOf(from), to, fields, now));
  }

  async setOnce(key: Key, field: string, value: string): Promise<boolean> {
    return this.updateIf("set once", key, {
      UpdateExpression: "SET #field = :value",
      ConditionExpression: "attribute_exists(pk) AND attribute_not_exists(#field)",
      ExpressionAttributeNames: { "#field": field },
      ExpressionAttributeValues: { ":value": value },
    });
  }

  async addToBatch(key: Key, batchId: string): Promise<boolean> {
    return this.updateIf("add to batch", key, {
      UpdateExpression: "SET #batches = list_append(if_not_exists(#batches, :none), :batch)",
      ConditionExpression:
        "attribute_exists(pk) AND (attribute_not_exists(batchId) OR batchId <> :id) AND NOT contains(#batches, :id)",
      ExpressionAttributeNames: { "#batches": "otherBatchIds" },
      ExpressionAttributeValues: { ":none": [], ":batch": [batchId], ":id": batchId },
    });
  }

  /** The conditional update, query, batch get and reader the review writes and the reads share. */
  private readonly table: reviews.TableAccess & reads.ReadAccess = {
    updateIf: (what, key, input) => this.updateIf(what, key, input),
    query: (input) =>
      this.call("query", () => this.client.send(new QueryCommand({ TableName: this.tableName, ...input }))),
    getMany: (keys, consistent) =>
      this.call("batch get", () =>
        getMany(keys, (input) => this.client.send(new BatchGetCommand(input)), this.tableName, consistent),
      ),
    toRecord: stripKeys,
  };

  pageReviewQueue(query: {
    policyIds: readonly string[];
    limit: number;
    cursor?: string;
    countCap: number;
  }): Promise<RecordPage> {
    return reads.pageReviewQueue(this.table, query);
  }

  pendingOf(policyId: string, countCap: number): Promise<PendingSummary> {
    return reads.pendingOf(this.table, policyId, countCap);
  }

  reviewedSince(policyId: string, since: string): AsyncIterable<DecisionRecord> {
    return reads.reviewedSince(this.table, policyId, since);
  }

  pendingSince(policyId: string, since: string): AsyncIterable<DecisionRecord> {
    return reads.pendingSince(this.table, policyId, since);
  }

  pageDecisions(filter: DecisionFilter, page: { limit: number; cursor?: string }): Promise<DecisionPage> {
    return reads.pageDecisions(this.table, filter, page);
  }

  sampleDecisions(sample: DecisionSample): Promise<DecisionRecord[]> {
    return reads.sampleDecisions(this.table, sample);
  }

  writeReview(key: Key, write: ReviewWrite, now = new Date()): Promise<boolean> {
    return reviews.writeReview(this.table, key, write, now);
  }

  claimReview(
    key: Key,
    claim: ReviewClaim,
    now: number,
    options?: { readonly takeOver?: boolean },
  ): Promise<boolean> {
    return reviews.claimReview(this.table, key, claim, now, options);
  }

  noteFailure(messageId: string, reason: string, now = new Date()): Promise<number> {
    return failures.noteFailure(this.failureTable, messageId, reason, now);
  }

  failureOf(messageId: string): Promise<{ reason: string; at: string } | undefined> {
    return failures.failureOf(this.failureTable, messageId);
  }

  /** The client, table and classified call the failure notes use. */
  private get failureTable(): failures.FailureTable {
    return { client: this.client, tableName: this.tableName, call: (what, run) => this.call(what, run) };
  }
}
