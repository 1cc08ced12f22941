/**
 * The review half of the DynamoDB decision store: the versioned review write (status and
 * `reviewVersion` guard, history appended with list_append), the expiring claim, and pages of the
 * status index with a cursor and a total. Kept apart so the store module stays readable.
 */
import type { QueryCommandInput, UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { DecisionRecord, RecordStatus } from "../domain/decision-record.ts";
import type { RecordKey, RecordPage, ReviewWrite } from "../domain/decision-store.ts";
import type { ReviewClaim } from "../domain/review.ts";
import { STATUS_INDEX } from "./decisions-table.ts";

/** What the store lends these functions: its conditional update, query and item reader. */
export interface TableAccess {
  /** Runs a conditional update; false when its condition failed. */
  readonly updateIf: (
    what: string,
    key: RecordKey,
    input: Omit<UpdateCommandInput, "TableName" | "Key">,
  ) => Promise<boolean>;
  readonly query: (input: Omit<QueryCommandInput, "TableName">) => Promise<{
    Items?: Record<string, unknown>[];
    LastEvaluatedKey?: Record<string, unknown>;
    Count?: number;
  }>;
  readonly toRecord: (item: Record<string, unknown>) => DecisionRecord;
}

/** The versioned review write. */
export function writeReview(
  table: TableAccess,
  key: RecordKey,
  write: ReviewWrite,
  now: Date,
): Promise<boolean> {
  const names: Record<string, string> = {
    "#status": "status",
    "#updatedAt": "updatedAt",
    "#rv": "reviewVersion",
  };
  const values: Record<string, unknown> = {
    ":from": write.from,
    ":to": write.to,
    ":now": now.toISOString(),
    ":next": write.reviewVersion + 1,
  };
  const sets = ["#status = :to", "#updatedAt = :now", "#rv = :next"];
  for (const [i, [field, value]] of Object.entries(write.set).entries()) {
    names[`#s${i}`] = field;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
  }
  if (write.entry) {
    names["#history"] = "reviewHistory";
    values[":entry"] = [write.entry];
    values[":empty"] = [];
    sets.push("#history = list_append(if_not_exists(#history, :empty), :entry)");
  }
  const removes = (write.remove ?? []).map((field, i) => {
    names[`#r${i}`] = field;
    return `#r${i}`;
  });
  let guard = "#status = :from AND #rv = :current";
  if (write.reviewVersion === 0) guard = "#status = :from AND (attribute_not_exists(#rv) OR #rv = :current)";
  values[":current"] = write.reviewVersion;
  return table.updateIf("review write", key, {
    UpdateExpression: `SET ${sets.join(", ")}${removes.length ? ` REMOVE ${removes.join(", ")}` : ""}`,
    ConditionExpression: guard,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
}

/** Claims a pending item unless another reviewer's claim is still running. */
export function claimReview(
  table: TableAccess,
  key: RecordKey,
  claim: ReviewClaim,
  now: number,
  options: { readonly takeOver?: boolean } = {},
): Promise<boolean> {
  // An admin's take-over needs only the item to be pending; anyone else needs it free.
  if (options.takeOver)
    return table.updateIf("claim", key, {
      UpdateExpression: "SET #claim = :claim",
      ConditionExpression: "#status = :pending",
      ExpressionAttributeNames: { "#status": "status", "#claim": "claim" },
      ExpressionAttributeValues: { ":pending": "pending_review", ":claim": { ...claim } },
    });
  return table.updateIf("claim", key, {
    UpdateExpression: "SET #claim = :claim",
    ConditionExpression:
      "#status = :pending AND (attribute_not_exists(#claim) OR #claim.#until < :now OR #claim.reviewerId = :me)",
    ExpressionAttributeNames: { "#status": "status", "#claim": "claim", "#until": "until" },
    ExpressionAttributeValues: {
      ":pending": "pending_review",
      ":claim": { ...claim },
      ":now": now,
      ":me": claim.reviewerId,
    },
  });
}

const encodeCursor = (key: Record<string, unknown>) => Buffer.from(JSON.stringify(key)).toString("base64url");

function decodeCursor(cursor: string): Record<string, unknown> {
  try {
    const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (key && typeof key === "object" && !Array.isArray(key)) return key;
  } catch {
    // falls through to the error below
  }
  throw new RangeError(`cursor: "${cursor.slice(0, 40)}" is not a page cursor of this list`);
}

/** One page of the status index, oldest first, with the status's total. */
export async function pageByStatus(
  table: TableAccess,
  status: RecordStatus,
  { limit, cursor }: { limit: number; cursor?: string },
): Promise<RecordPage> {
  const byStatus = {
    IndexName: STATUS_INDEX,
    KeyConditionExpression: "#status = :status",
    ExpressionAttributeNames: { "#status": "status" },
    ExpressionAttributeValues: { ":status": status },
  };
  const page = await table.query({
    ...byStatus,
    Limit: limit,
    ...(cursor ? { ExclusiveStartKey: decodeCursor(cursor) } : {}),
  });
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const counted = await table.query({
      ...byStatus,
      Select: "COUNT",
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    });
    total += counted.Count ?? 0;
    startKey = counted.LastEvaluatedKey;
  } while (startKey);
  const records = (page.Items ?? []).map(table.toRecord);
  // DynamoDB hands back a key even when the page ended exactly at the last record: only offer a
  // next page when one exists.
  const next =
    page.LastEvaluatedKey && records.length === limit ? encodeCursor(page.LastEvaluatedKey) : undefined;
  return { records, total, ...(next ? { next } : {}) };
}
