/**
 * The index attributes of the decisions table's items (`decisions-table.ts`): which partition of
 * which index an item is listed in, and its place there. A partition key carries a shard, picked
 * by a hash of the item id, so that one busy policy spreads its writes over
 * `TABLE_INDEXES.shards` index partitions; a sort key is a time followed by the item's table key,
 * so it is unique and orders the same way in every shard (a page merges the shards by it).
 */
import { type DecisionRecord, type RecordStatus, recordKey } from "../../domain/decision-record.ts";
import type { RecordKey } from "../../domain/decision-store.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";
import { LIST_INDEX, TIME_INDEX } from "./decisions-table.ts";

/** Every index attribute: the stores strip them from what they hand back. */
export const INDEX_ATTRIBUTES = [
  TIME_INDEX.partitionKey,
  TIME_INDEX.sortKey,
  LIST_INDEX.partitionKey,
  LIST_INDEX.sortKey,
] as const;

/** The list partition of the batches (created a few times an hour: one partition is plenty). */
export const BATCHES_LIST = "batches";

/** An item's shard: FNV-1a of its id, so every version of an item lands in the same one. */
export function shardOf(itemId: string, shards: number = TABLE_INDEXES.shards): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < itemId.length; i++) {
    hash ^= itemId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

const everyShard = (prefix: string): string[] =>
  Array.from({ length: TABLE_INDEXES.shards }, (_, shard) => `${prefix}#${shard}`);

/** The partitions of each list, every shard. */
export const partitionsOf = {
  /** A policy's decided records (byTime). */
  decided: (policyId: string): string[] => everyShard(`decided#${policyId}`),
  /** Rejected records of every policy (byTime): an unknown policy's too. */
  rejected: (): string[] => everyShard("rejected"),
  /** A policy's items waiting for review (byList). */
  pending: (policyId: string): string[] => everyShard(`pending#${policyId}`),
  /** A policy's reviewed items, by the time of their label (byList). */
  reviewed: (policyId: string): string[] => everyShard(`reviewed#${policyId}`),
} as const;

/** A sort key: the time, then the item's table key (unique, and ordered alike in every shard). */
export function sortKeyOf(time: string, key: { pk: string; sk: string }): string {
  return `${time}|${key.pk}|${key.sk}`;
}

/** The time a sort key starts with. */
export function timeOfSortKey(sortKey: string): string {
  return sortKey.slice(0, sortKey.indexOf("|"));
}

const tableKey = (key: RecordKey) => recordKey(key.itemId, key.policyId, key.policyVersion);

/** The list a record in `status` is in, if any. */
function listOf(key: RecordKey, status: RecordStatus): string | undefined {
  const shard = shardOf(key.itemId);
  if (status === "pending_review") return `pending#${key.policyId}#${shard}`;
  if (status === "reviewed") return `reviewed#${key.policyId}#${shard}`;
  return undefined;
}

/** The index attributes of a record as it is created. */
export function indexAttributesOf(record: DecisionRecord): Record<string, string> {
  const key = tableKey(record);
  const shard = shardOf(record.itemId);
  const time = sortKeyOf(record.createdAt, key);
  const queued = record.queuedAt ? sortKeyOf(record.queuedAt, key) : time;
  const list = listOf(record, record.status);
  return {
    [TIME_INDEX.partitionKey]:
      record.status === "rejected" ? `rejected#${shard}` : `decided#${record.policyId}#${shard}`,
    [TIME_INDEX.sortKey]: time,
    ...(list
      ? {
          [LIST_INDEX.partitionKey]: list,
          [LIST_INDEX.sortKey]:
            record.status === "reviewed" ? sortKeyOf(record.reviewedAt ?? record.updatedAt, key) : queued,
        }
      : {}),
  };
}

/** Clauses of an UpdateExpression, with the names and values they use. */
export interface UpdateClauses {
  readonly sets: string[];
  readonly removes: string[];
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/**
 * The clauses that move a record's list entry to where a record in `status` is listed: the
 * pending list sorts by creation (copied from the time index's sort key, which the record
 * carries) or by `queuedAt` when given, the reviewed one by `reviewedAt`; any other status is in
 * no list.
 */
export function listMoveClauses(
  key: RecordKey,
  status: RecordStatus,
  reviewedAt: string,
  queuedAt?: unknown,
): UpdateClauses {
  const list = listOf(key, status);
  const names = { "#listKey": LIST_INDEX.partitionKey, "#listSort": LIST_INDEX.sortKey };
  if (!list) return { sets: [], removes: ["#listKey", "#listSort"], names, values: {} };
  // An item queued later than it was decided (a certification sample) is listed when it was queued.
  if (status === "pending_review" && typeof queuedAt === "string")
    return {
      sets: ["#listKey = :listKey", "#listSort = :listSort"],
      removes: [],
      names,
      values: { ":listKey": list, ":listSort": sortKeyOf(queuedAt, tableKey(key)) },
    };
  if (status === "pending_review")
    return {
      sets: ["#listKey = :listKey", "#listSort = #timeSort"],
      removes: [],
      names: { ...names, "#timeSort": TIME_INDEX.sortKey },
      values: { ":listKey": list },
    };
  return {
    sets: ["#listKey = :listKey", "#listSort = :listSort"],
    removes: [],
    names,
    values: { ":listKey": list, ":listSort": sortKeyOf(reviewedAt, tableKey(key)) },
  };
}
