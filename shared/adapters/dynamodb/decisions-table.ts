/**
 * The decisions table's schema, defined once: the CDK app and the local stand-in both read it.
 *
 * Two sparse indexes, each keyed so that writes spread over many partitions (the key carries a
 * shard picked by a hash of the item id), each projecting no more than its readers filter on:
 * - `byTime`: every decision record, newest first per policy and shard (rejected items in
 *   shards of their own), for the decisions view, the drift sample and the operator tools;
 * - `byList`: only what someone lists: the items pending review (oldest first, per policy and
 *   shard), the reviewed ones by the time of their label (calibration), and the batches.
 * Pages read the keys from an index and the records themselves with BatchGetItem, so an index
 * entry is a few hundred bytes however large the item's state.
 */

/** The index of decision records by time. */
export const TIME_INDEX = {
  name: "byTime",
  partitionKey: "timeKey",
  sortKey: "timeSort",
  /** What the decisions view filters on in the query, and what the drift sample filters on. */
  include: ["policyId", "policyVersion", "route", "batchId"],
} as const;

/** The index of the lists: pending review, reviewed, batches. Keys only. */
export const LIST_INDEX = {
  name: "byList",
  partitionKey: "listKey",
  sortKey: "listSort",
  include: [],
} as const;

/** Key schema and indexes of the decisions table. */
export const DECISIONS_TABLE_SCHEMA = {
  partitionKey: "pk",
  sortKey: "sk",
  indexes: [TIME_INDEX, LIST_INDEX],
  ttlAttribute: "expiresAt",
} as const;

/** An index's projection as DynamoDB's API spells it. */
export function projectionOf(index: { readonly include: readonly string[] }) {
  return index.include.length > 0
    ? { ProjectionType: "INCLUDE" as const, NonKeyAttributes: [...index.include] }
    : { ProjectionType: "KEYS_ONLY" as const };
}

/** The CreateTable input for DynamoDB (local runs and tests). */
export function createTableInput(tableName: string) {
  const s = DECISIONS_TABLE_SCHEMA;
  const attribute = (name: string) => ({ AttributeName: name, AttributeType: "S" as const });
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST" as const,
    AttributeDefinitions: [
      attribute(s.partitionKey),
      attribute(s.sortKey),
      ...s.indexes.flatMap((index) => [attribute(index.partitionKey), attribute(index.sortKey)]),
    ],
    KeySchema: [
      { AttributeName: s.partitionKey, KeyType: "HASH" as const },
      { AttributeName: s.sortKey, KeyType: "RANGE" as const },
    ],
    GlobalSecondaryIndexes: s.indexes.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: "HASH" as const },
        { AttributeName: index.sortKey, KeyType: "RANGE" as const },
      ],
      Projection: projectionOf(index),
    })),
  };
}
