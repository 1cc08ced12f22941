/**
 * Failure notes in the decisions table, beside the records: why a message failed, keyed by its SQS
 * message id under `FAILURE#<messageId>` / `LAST`, with the count of failures noted for it so far
 * (the decide function dead-letters an item itself at its limit, since SQS counts an overload
 * return as a receive too) and when; `decide replay` filters dead letters on the reason. A note is
 * not a decision record and has none of a record's attributes.
 */
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";

/** What the store lends these functions. */
export interface FailureTable {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Runs one table call, its failures classified. */
  call<T>(what: string, run: () => Promise<T>): Promise<T>;
}

/** Notes why a message failed (the reason cut at 1,000 characters); returns its failures so far. */
export async function noteFailure(
  table: FailureTable,
  messageId: string,
  reason: string,
  now: Date,
): Promise<number> {
  const output = await table.call("note failure", () =>
    table.client.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: `FAILURE#${messageId}`, sk: "LAST" },
        UpdateExpression: "SET #reason = :reason, #at = :at ADD #failures :one",
        ExpressionAttributeNames: { "#reason": "reason", "#at": "at", "#failures": "failures" },
        ExpressionAttributeValues: {
          ":reason": reason.slice(0, 1000),
          ":at": now.toISOString(),
          ":one": 1,
        },
        ReturnValues: "UPDATED_NEW",
      }),
    ),
  );
  return Number(output.Attributes?.failures ?? 1);
}

/** The last failure noted for a message, if any. */
export async function failureOf(
  table: FailureTable,
  messageId: string,
): Promise<{ reason: string; at: string } | undefined> {
  const output = await table.call("get failure", () =>
    table.client.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: `FAILURE#${messageId}`, sk: "LAST" } }),
    ),
  );
  return output.Item ? { reason: String(output.Item.reason), at: String(output.Item.at) } : undefined;
}
