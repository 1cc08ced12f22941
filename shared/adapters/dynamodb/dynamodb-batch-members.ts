/**
 * The batch store's reads and marks that serve the files step and intake: a batch's members a
 * page at a time (filtered by state in the query), intake's conditional record of which line holds
 * an id, the files' stale flag with its version, and the announcement claim. Kept apart so the
 * store module stays readable.
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { BatchMember, MemberState } from "../../domain/batch.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";
import { batchKey, fromMemberItem, isConditionFailure, memberKey } from "./dynamodb-batch-items.ts";

/** What the store lends these functions. */
export interface BatchTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Runs one table call, its failures classified (a condition failure passes through as it is). */
  call<T>(what: string, run: () => Promise<T>): Promise<T>;
}

/** A member's state, read consistently; undefined before it was counted. */
export async function memberState(
  table: BatchTable,
  batchId: string,
  itemId: string,
): Promise<MemberState | undefined> {
  const output = await table.call("get member", () =>
    table.client.send(
      new GetCommand({ TableName: table.tableName, Key: memberKey(batchId, itemId), ConsistentRead: true }),
    ),
  );
  return output.Item?.state as MemberState | undefined;
}

/** Every member (or those in `only`'s states), in item id order, a page at a time. */
export async function* memberPages(
  table: BatchTable,
  batchId: string,
  only?: readonly MemberState[],
): AsyncGenerator<BatchMember[]> {
  const states = Object.fromEntries((only ?? []).map((state, i) => [`:s${i}`, state]));
  let start: Record<string, unknown> | undefined;
  do {
    const output = await table.call("list members", () =>
      table.client.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :member)",
          ...(only
            ? {
                FilterExpression: `#state IN (${Object.keys(states).join(", ")})`,
                ExpressionAttributeNames: { "#state": "state" },
              }
            : {}),
          ExpressionAttributeValues: { ":pk": `BATCH#${batchId}`, ":member": "MEMBER#", ...states },
          Limit: TABLE_INDEXES.scanPage,
          ExclusiveStartKey: start,
          ConsistentRead: true,
        }),
      ),
    );
    const page = (output.Items ?? []).map(fromMemberItem);
    if (page.length > 0) yield page;
    start = output.LastEvaluatedKey;
  } while (start);
}

/** The line that holds `itemId` in the batch's file: `line` unless another line was recorded first. */
export async function claimLine(
  table: BatchTable,
  batchId: string,
  itemId: string,
  line: number,
): Promise<number> {
  const Key = { pk: `BATCH#${batchId}`, sk: `LINE-ID#${itemId}` };
  try {
    await table.call("claim line", () =>
      table.client.send(
        new PutCommand({
          TableName: table.tableName,
          Item: { ...Key, line },
          // The same line again is intake reading the same file again, not a repeat.
          ConditionExpression: "attribute_not_exists(pk) OR #line = :line",
          ExpressionAttributeNames: { "#line": "line" },
          ExpressionAttributeValues: { ":line": line },
        }),
      ),
    );
    return line;
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const output = await table.call("get line", () =>
      table.client.send(new GetCommand({ TableName: table.tableName, Key, ConsistentRead: true })),
    );
    return Number(output.Item?.line);
  }
}

/** Bumps the files' version and marks them stale; true when they were current until now. */
export async function markFilesStale(table: BatchTable, batchId: string, now: Date): Promise<boolean> {
  const output = await table.call("mark files stale", () =>
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: batchKey(batchId),
        UpdateExpression:
          "SET filesVersion = if_not_exists(filesVersion, :zero) + :one, filesStaleSince = if_not_exists(filesStaleSince, :now)",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":zero": 0, ":one": 1, ":now": now.toISOString() },
        ReturnValues: "UPDATED_OLD",
      }),
    ),
  );
  return output.Attributes?.filesStaleSince === undefined;
}

/** Clears the stale mark unless the version moved since the files were read; false when it did. */
export async function markFilesCurrent(
  table: BatchTable,
  batchId: string,
  version: number,
): Promise<boolean> {
  try {
    await table.call("mark files current", () =>
      table.client.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: batchKey(batchId),
          UpdateExpression: "REMOVE filesStaleSince",
          ConditionExpression: "attribute_not_exists(filesVersion) OR filesVersion = :version",
          ExpressionAttributeValues: { ":version": version },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Claims the right to announce `phase` until `until`, unless it went out or another holds a live claim. */
export async function claimAnnouncement(
  table: BatchTable,
  batchId: string,
  phase: "completed" | "reviewed",
  now: number,
  until: number,
): Promise<boolean> {
  const flag = phase === "completed" ? "completedEventPublished" : "reviewedEventPublished";
  try {
    await table.call("claim announcement", () =>
      table.client.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: batchKey(batchId),
          UpdateExpression: "SET #lease = :until",
          ConditionExpression:
            "attribute_exists(pk) AND (attribute_not_exists(#flag) OR #flag = :false) AND (attribute_not_exists(#lease) OR #lease < :now)",
          ExpressionAttributeNames: { "#lease": `${phase}LeaseUntil`, "#flag": flag },
          ExpressionAttributeValues: { ":until": until, ":now": now, ":false": false },
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
