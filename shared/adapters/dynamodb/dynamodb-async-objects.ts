/**
 * The async lane's object records in the decisions table, beside the decisions: `ASYNC#<id>` /
 * `OBJECT`. An open object is listed in the `byList` index (`async-open`, by submission time) and
 * leaves it when closed, so the async backlog is read without a scan. Every move is a conditional
 * write on the state it was read in: a redelivered notification or two workers at once cannot
 * count an attempt twice or reopen a closed object. A retry moves the inference id and the output
 * location SageMaker returned together.
 */
import {
  BatchGetCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type {
  AsyncAttempt,
  AsyncObject,
  AsyncObjectState,
  AsyncObjectStore,
} from "../../domain/async/async-objects.ts";
import { INDEX_ATTRIBUTES } from "./decision-index-keys.ts";
import { LIST_INDEX } from "./decisions-table.ts";
import { getMany } from "./dynamodb-batch-get.ts";
import { isConditionFailure } from "./dynamodb-batch-items.ts";
import { tableCall } from "./dynamodb-calls.ts";

/** The list partition of the open objects (a few an hour per batch: one partition is plenty). */
const OPEN_LIST = "async-open";

const keyOf = (objectId: string) => ({ pk: `ASYNC#${objectId}`, sk: "OBJECT" });

/** The record as stored, without its keys and index attributes. */
function toObject(item: Record<string, unknown>): AsyncObject {
  const { pk: _pk, sk: _sk, ...rest } = item;
  for (const attribute of INDEX_ATTRIBUTES) delete rest[attribute];
  return rest as unknown as AsyncObject;
}

/** The object records on the decisions table. */
export class DynamoDbAsyncObjectStore implements AsyncObjectStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    readonly tableName: string,
  ) {}

  /** Runs a conditional write: false when its condition failed. */
  private async conditional(what: string, run: () => Promise<unknown>): Promise<boolean> {
    try {
      await tableCall(what, run, isConditionFailure);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  create(object: AsyncObject): Promise<boolean> {
    const open =
      object.state === "submitted"
        ? {
            [LIST_INDEX.partitionKey]: OPEN_LIST,
            [LIST_INDEX.sortKey]: `${object.submittedAt}|${object.objectId}`,
          }
        : {};
    return this.conditional("create async object", () =>
      this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...keyOf(object.objectId), ...object, ...open },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      ),
    );
  }

  async get(objectId: string): Promise<AsyncObject | undefined> {
    const output = await tableCall(
      "get async object",
      () =>
        this.client.send(
          new GetCommand({ TableName: this.tableName, Key: keyOf(objectId), ConsistentRead: true }),
        ),
      () => false,
    );
    return output.Item ? toObject(output.Item) : undefined;
  }

  retry(objectId: string, from: string, next: AsyncAttempt): Promise<boolean> {
    return this.conditional("retry async object", () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf(objectId),
          UpdateExpression: "SET attempts = :attempts, inferenceId = :next, outputLocation = :output",
          ConditionExpression: "#state = :submitted AND inferenceId = :from",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":attempts": next.attempts,
            ":next": next.inferenceId,
            ":output": next.outputLocation,
            ":from": from,
            ":submitted": "submitted",
          },
        }),
      ),
    );
  }

  close(objectId: string, state: Exclude<AsyncObjectState, "submitted">, reason?: string): Promise<boolean> {
    return this.conditional("close async object", () =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keyOf(objectId),
          UpdateExpression: `SET #state = :state${reason ? ", reason = :reason" : ""} REMOVE ${LIST_INDEX.partitionKey}, ${LIST_INDEX.sortKey}`,
          ConditionExpression: "#state = :submitted",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: {
            ":state": state,
            ":submitted": "submitted",
            ...(reason ? { ":reason": reason.slice(0, 1000) } : {}),
          },
        }),
      ),
    );
  }

  async open(limit: number): Promise<AsyncObject[]> {
    const keys: { pk: string; sk: string }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await tableCall(
        "list open async objects",
        () =>
          this.client.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: LIST_INDEX.name,
              KeyConditionExpression: "#list = :open",
              ExpressionAttributeNames: { "#list": LIST_INDEX.partitionKey },
              ExpressionAttributeValues: { ":open": OPEN_LIST },
              Limit: limit - keys.length,
              ...(start ? { ExclusiveStartKey: start } : {}),
            }),
          ),
        () => false,
      );
      for (const item of page.Items ?? []) keys.push({ pk: String(item.pk), sk: String(item.sk) });
      start = page.LastEvaluatedKey;
    } while (start && keys.length < limit);
    const items = await getMany(
      keys,
      (input) => this.client.send(new BatchGetCommand(input)),
      this.tableName,
      false,
    );
    return items.map(toObject).filter((object) => object.state === "submitted");
  }
}
