/**
 * The decisions table's schema, defined once: the CDK app and the local stand-in both read it.
 */

/** Name of the index that lists records by status (the review queue), newest last. */
export const STATUS_INDEX = "byStatus";

/** Key schema and index of the decisions table. */
export const DECISIONS_TABLE_SCHEMA = {
  partitionKey: "pk",
  sortKey: "sk",
  statusIndex: { name: STATUS_INDEX, partitionKey: "status", sortKey: "createdAt" },
  ttlAttribute: "expiresAt",
} as const;

/** The CreateTable input for DynamoDB (local runs and tests). */
export function createTableInput(tableName: string) {
  const s = DECISIONS_TABLE_SCHEMA;
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST" as const,
    AttributeDefinitions: [
      { AttributeName: s.partitionKey, AttributeType: "S" as const },
      { AttributeName: s.sortKey, AttributeType: "S" as const },
      { AttributeName: s.statusIndex.partitionKey, AttributeType: "S" as const },
      { AttributeName: s.statusIndex.sortKey, AttributeType: "S" as const },
    ],
    KeySchema: [
      { AttributeName: s.partitionKey, KeyType: "HASH" as const },
      { AttributeName: s.sortKey, KeyType: "RANGE" as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: s.statusIndex.name,
        KeySchema: [
          { AttributeName: s.statusIndex.partitionKey, KeyType: "HASH" as const },
          { AttributeName: s.statusIndex.sortKey, KeyType: "RANGE" as const },
        ],
        Projection: { ProjectionType: "ALL" as const },
      },
    ],
  };
}
