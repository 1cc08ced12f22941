/**
 * A batch's counted writes: a member's state and the batch's counters move in one transaction
 * whose condition is the member's previous state, so two workers (or a redelivery) can never count
 * one item twice; a reviewer's label, and its revision, move the member's label and the batch's
 * reviewed count the same way. A conflict with a concurrent transaction on the counters (two
 * members of one batch counted at once) is tried again with backoff. Each write says whether it
 * was made; the store then reads the batch as it now stands.
 */
import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import { backoff } from "../../domain/backoff/backoff.ts";
import { type BatchMember, countDelta, mayMove } from "../../domain/batch.ts";
import { StoreUnavailableError } from "../../domain/errors.ts";
import {
  batchKey,
  cancellationCodes,
  isConditionFailure,
  memberItem,
  memberKey,
  revisionWrites,
} from "./dynamodb-batch-items.ts";
import { type BatchTable, memberState } from "./dynamodb-batch-members.ts";

/**
 * Runs a transaction; false when its condition failed. A conflict with a concurrent transaction
 * (two members of one batch counted at once) is tried again with backoff.
 */
async function transact(
  table: BatchTable,
  what: string,
  input: ConstructorParameters<typeof TransactWriteCommand>[0],
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      await table.client.send(new TransactWriteCommand(input));
      return true;
    } catch (error) {
      if (cancellationCodes(error).includes("TransactionConflict") && attempt < 10) {
        await backoff(attempt + 1, 20);
        continue;
      }
      if (isConditionFailure(error)) return false;
      throw new StoreUnavailableError(`decisions table ${what} failed: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}

/** Moves a member to its new state and the batch's counters with it; false when it may not move or another writer got there first. */
export async function recordMember(
  table: BatchTable,
  batchId: string,
  member: BatchMember,
): Promise<boolean> {
  const previous = await memberState(table, batchId, member.itemId);
  if (!mayMove(previous, member.state)) return false;
  const delta = countDelta(previous, member.state);
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const adds = Object.entries(delta).map(([key, by], i) => {
    names[`#c${i}`] = key;
    values[`:c${i}`] = by!;
    return `#c${i} :c${i}`;
  });
  return transact(table, "record member", {
    TransactItems: [
      {
        Put: {
          TableName: table.tableName,
          Item: { ...memberKey(batchId, member.itemId), ...memberItem(member) },
          // The state it was read in: a concurrent writer that got there first wins.
          ...(previous === undefined
            ? { ConditionExpression: "attribute_not_exists(pk)" }
            : {
                ConditionExpression: "#state = :previous",
                ExpressionAttributeNames: { "#state": "state" },
                ExpressionAttributeValues: { ":previous": previous },
              }),
        },
      },
      {
        Update: {
          TableName: table.tableName,
          Key: batchKey(batchId),
          UpdateExpression: `ADD ${adds.join(", ")}`,
          ConditionExpression: "attribute_exists(pk)",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    ],
  });
}

/** A human member's first label, and the batch's reviewed count; false when it was labelled already. */
export function recordLabel(
  table: BatchTable,
  batchId: string,
  itemId: string,
  label: string,
): Promise<boolean> {
  return transact(table, "record label", {
    TransactItems: [
      {
        Update: {
          TableName: table.tableName,
          Key: memberKey(batchId, itemId),
          UpdateExpression: "SET label = :label",
          ConditionExpression: "#state = :human AND attribute_not_exists(label)",
          ExpressionAttributeNames: { "#state": "state" },
          ExpressionAttributeValues: { ":label": label, ":human": "human" },
        },
      },
      {
        Update: {
          TableName: table.tableName,
          Key: batchKey(batchId),
          UpdateExpression: "ADD reviewed :one",
          ExpressionAttributeValues: { ":one": 1 },
        },
      },
    ],
  });
}

/** A member's label changed, or undone (`undefined`: one review fewer on the batch); false when it has no label. */
export function reviseLabel(
  table: BatchTable,
  batchId: string,
  itemId: string,
  label: string | undefined,
): Promise<boolean> {
  return transact(table, "revise label", revisionWrites(table.tableName, batchId, itemId, label));
}
