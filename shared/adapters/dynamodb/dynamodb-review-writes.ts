/**
 * The review half of the DynamoDB decision store: the versioned review write (status and
 * `reviewVersion` guard, history appended with list_append, the record moved between the pending
 * and reviewed lists in the same write) and the expiring claim. Kept apart so the store module
 * stays readable.
 */
import type { UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import type { RecordKey, ReviewWrite } from "../../domain/decision-store.ts";
import type { ReviewClaim } from "../../domain/review/review.ts";
import { listMoveClauses } from "./decision-index-keys.ts";

/** What the store lends these functions: its conditional update. */
export interface TableAccess {
  /** Runs a conditional update; false when its condition failed. */
  readonly updateIf: (
    what: string,
    key: RecordKey,
    input: Omit<UpdateCommandInput, "TableName" | "Key">,
  ) => Promise<boolean>;
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
  // A status change, or a changed label's new time, moves the record's list entry.
  const reviewedAt = write.set.reviewedAt;
  if (write.from !== write.to || typeof reviewedAt === "string") {
    const move = listMoveClauses(
      key,
      write.to,
      typeof reviewedAt === "string" ? reviewedAt : now.toISOString(),
      write.set.queuedAt,
    );
    Object.assign(names, move.names);
    Object.assign(values, move.values);
    sets.push(...move.sets);
    removes.push(...move.removes);
  }
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
