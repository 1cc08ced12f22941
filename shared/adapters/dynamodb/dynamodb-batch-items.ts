/**
 * How batches and their members are stored in the decisions table (keys, attribute names) and
 * how a cancelled transaction is read: the helpers of `dynamodb-batch-store.ts`.
 */
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { type BatchCounts, type BatchMember, type BatchRecord, NO_COUNTS } from "../../domain/batch.ts";

const BATCH_SK = "BATCH";
const COUNT_KEYS = Object.keys(NO_COUNTS) as (keyof BatchCounts)[];

/** The batch item's key. */
export const batchKey = (batchId: string) => ({ pk: `BATCH#${batchId}`, sk: BATCH_SK });
/** A member's key. */
export const memberKey = (batchId: string, itemId: string) => ({
  pk: `BATCH#${batchId}`,
  sk: `MEMBER#${itemId}`,
});

/**
 * Whether a write failed on its condition (for a member: it was counted already). A transaction
 * cancelled for another reason (a conflict with a concurrent transaction on the batch's counters,
 * throttling) is not, and must never be taken for "already counted".
 */
export function isConditionFailure(error: unknown): boolean {
  const name = (error as { name?: string })?.name;
  if (name === "ConditionalCheckFailedException") return true;
  if (!(error instanceof TransactionCanceledException || name === "TransactionCanceledException"))
    return false;
  const codes = cancellationCodes(error);
  return codes.includes("ConditionalCheckFailed") && !codes.includes("TransactionConflict");
}

/** The codes of a cancelled transaction's reasons, one per item. */
export function cancellationCodes(error: unknown): string[] {
  return ((error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).map(
    (r) => r.Code ?? "",
  );
}

/** A batch from its stored item. */
export function toBatch(item: Record<string, unknown>): BatchRecord {
  const {
    pk: _pk,
    sk: _sk,
    status: _mark,
    listKey: _listKey,
    listSort: _listSort,
    batchStatus,
    completedLeaseUntil: _c,
    reviewedLeaseUntil: _r,
    ...rest
  } = item;
  const counts = Object.fromEntries(
    COUNT_KEYS.map((k) => [k, Number(rest[k] ?? 0)]),
  ) as unknown as BatchCounts;
  for (const k of COUNT_KEYS) delete rest[k];
  return {
    ...(rest as Omit<BatchRecord, "status" | "counts">),
    status: batchStatus as BatchRecord["status"],
    counts,
  };
}

/**
 * A member as stored: its record status under `recordStatus`, since an item with a `status`
 * would appear in the status index (the review queue).
 */
export function memberItem(member: BatchMember): Record<string, unknown> {
  const { status, distribution, ...rest } = member;
  return {
    ...rest,
    ...(status ? { recordStatus: status } : {}),
    // As text: a DynamoDB map would come back with its keys in another order than the options'.
    ...(distribution ? { distributionJson: JSON.stringify(distribution) } : {}),
  };
}

/** A member from its stored item. */
export function fromMemberItem(item: Record<string, unknown>): BatchMember {
  const { pk: _pk, sk: _sk, recordStatus, distributionJson, ...member } = item;
  return {
    ...member,
    ...(recordStatus ? { status: recordStatus } : {}),
    ...(typeof distributionJson === "string" ? { distribution: JSON.parse(distributionJson) } : {}),
  } as BatchMember;
}

/**
 * The writes of a changed (`label`) or undone (undefined) label: the member's label, and for an
 * undo one review fewer on the batch; conditioned on the member having a label.
 */
export function revisionWrites(
  tableName: string,
  batchId: string,
  itemId: string,
  label: string | undefined,
) {
  const member = {
    TableName: tableName,
    Key: memberKey(batchId, itemId),
    ConditionExpression: "attribute_exists(label)",
    ...(label === undefined
      ? { UpdateExpression: "REMOVE label" }
      : { UpdateExpression: "SET label = :label", ExpressionAttributeValues: { ":label": label } }),
  };
  const fewer = {
    TableName: tableName,
    Key: batchKey(batchId),
    UpdateExpression: "ADD reviewed :minus",
    ExpressionAttributeValues: { ":minus": -1 },
  };
  return {
    TransactItems: label === undefined ? [{ Update: member }, { Update: fewer }] : [{ Update: member }],
  };
}
