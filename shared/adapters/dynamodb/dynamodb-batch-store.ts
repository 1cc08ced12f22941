/**
 * Batches in the decisions table, beside the records: the batch under `BATCH#<id>` / `BATCH`, each
 * member under `BATCH#<id>` / `MEMBER#<itemId>`. A member's state and the batch's counters move in
 * one transaction whose condition is the member's previous state (`dynamodb-batch-counts.ts`), so
 * two workers (or a redelivery) can never count one item twice. A batch is listed in the `byList`
 * index (keys only: its counters move without writing the index), newest first; its status is
 * `batchStatus`. The member pages, intake's line records and the files' marks are in
 * `dynamodb-batch-members.ts`.
 */
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { BatchCounts, BatchMember, BatchRecord, BatchStore, MemberState } from "../../domain/batch.ts";
import { BATCHES_LIST } from "./decision-index-keys.ts";
import { LIST_INDEX } from "./decisions-table.ts";
import * as counted from "./dynamodb-batch-counts.ts";
import { getMany } from "./dynamodb-batch-get.ts";
import { batchKey, isConditionFailure, toBatch } from "./dynamodb-batch-items.ts";
import * as members from "./dynamodb-batch-members.ts";
import { tableCall } from "./dynamodb-calls.ts";

/** The batch store on the decisions table. */
export class DynamoDbBatchStore implements BatchStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  private call<T>(what: string, run: () => Promise<T>): Promise<T> {
    return tableCall(what, run, isConditionFailure);
  }

  async createBatch(batch: BatchRecord): Promise<boolean> {
    const { status, counts, ...rest } = batch;
    try {
      await this.call("put batch", () =>
        this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              ...batchKey(batch.batchId),
              ...rest,
              ...counts,
              batchStatus: status,
              [LIST_INDEX.partitionKey]: BATCHES_LIST,
              [LIST_INDEX.sortKey]: `${batch.createdAt}|${batch.batchId}`,
            },
            ConditionExpression: "attribute_not_exists(pk)",
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async getBatch(batchId: string): Promise<BatchRecord | undefined> {
    const output = await this.call("get batch", () =>
      this.client.send(
        new GetCommand({ TableName: this.tableName, Key: batchKey(batchId), ConsistentRead: true }),
      ),
    );
    return output.Item ? toBatch(output.Item) : undefined;
  }

  async listBatches(limit: number): Promise<BatchRecord[]> {
    const output = await this.call("list batches", () =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: LIST_INDEX.name,
          KeyConditionExpression: "#list = :batches",
          ExpressionAttributeNames: { "#list": LIST_INDEX.partitionKey },
          ExpressionAttributeValues: { ":batches": BATCHES_LIST },
          ScanIndexForward: false,
          Limit: limit,
        }),
      ),
    );
    const keys = (output.Items ?? []).map((item) => ({ pk: String(item.pk), sk: String(item.sk) }));
    const items = await this.call("get batches", () =>
      getMany(keys, (input) => this.client.send(new BatchGetCommand(input)), this.tableName, false),
    );
    return items.map(toBatch);
  }

  async finishIntake(
    batchId: string,
    counts: Pick<BatchCounts, "lines" | "accepted" | "rejected">,
    now: Date,
  ): Promise<BatchRecord> {
    const output = await this.call("finish intake", () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: batchKey(batchId),
          UpdateExpression:
            "SET #lines = :lines, accepted = :accepted, rejected = :rejected, batchStatus = :running, submittedAt = :now",
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: { "#lines": "lines" },
          ExpressionAttributeValues: {
            ":lines": counts.lines,
            ":accepted": counts.accepted,
            ":rejected": counts.rejected,
            ":running": "running",
            ":now": now.toISOString(),
          },
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    return toBatch(output.Attributes!);
  }

  async recordMember(batchId: string, member: BatchMember): Promise<BatchRecord | undefined> {
    const written = await counted.recordMember(this.table, batchId, member);
    return written ? this.getBatch(batchId) : undefined;
  }

  async recordLabel(batchId: string, itemId: string, label: string): Promise<BatchRecord | undefined> {
    const written = await counted.recordLabel(this.table, batchId, itemId, label);
    return written ? this.getBatch(batchId) : undefined;
  }

  async reviseLabel(
    batchId: string,
    itemId: string,
    label: string | undefined,
  ): Promise<BatchRecord | undefined> {
    const written = await counted.reviseLabel(this.table, batchId, itemId, label);
    return written ? this.getBatch(batchId) : undefined;
  }

  /** The client, table and classified call the members and counts modules share. */
  private get table(): members.BatchTable {
    return { client: this.client, tableName: this.tableName, call: (what, run) => this.call(what, run) };
  }

  memberPages(batchId: string, only?: readonly MemberState[]): AsyncIterable<BatchMember[]> {
    return members.memberPages(this.table, batchId, only);
  }

  claimLine(batchId: string, itemId: string, line: number): Promise<number> {
    return members.claimLine(this.table, batchId, itemId, line);
  }

  markFilesStale(batchId: string, now: Date): Promise<boolean> {
    return members.markFilesStale(this.table, batchId, now);
  }

  markFilesCurrent(batchId: string, version: number): Promise<boolean> {
    return members.markFilesCurrent(this.table, batchId, version);
  }

  claimAnnouncement(
    batchId: string,
    phase: "completed" | "reviewed",
    now: number,
    until: number,
  ): Promise<boolean> {
    return members.claimAnnouncement(this.table, batchId, phase, now, until);
  }

  async updateBatch(
    batchId: string,
    fields: Partial<Omit<BatchRecord, "batchId" | "counts">>,
  ): Promise<void> {
    const entries = Object.entries(fields).map(([k, v]) => [k === "status" ? "batchStatus" : k, v] as const);
    if (entries.length === 0) return;
    await this.call("update batch", () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: batchKey(batchId),
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :f${i}`).join(", ")}`,
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
          ExpressionAttributeValues: Object.fromEntries(entries.map(([, v], i) => [`:f${i}`, v])),
        }),
      ),
    );
  }
}
