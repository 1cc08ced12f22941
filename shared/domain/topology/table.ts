/**
 * The decisions table as the functions use it: what each function may do to it (the IAM grants,
 * least privilege) and how its indexes spread writes and bound a page's reads. The CDK app grants
 * and creates from these; the DynamoDB stores read and page by them.
 *
 * Part of the topology: `../topology.ts` re-exports it.
 */

/** DynamoDB actions on the decisions table. */
export type TableAction = "GetItem" | "PutItem" | "UpdateItem" | "Query" | "BatchGetItem";

/**
 * What each function may do to the decisions table: the least its code needs (never DeleteItem,
 * BatchWriteItem or Scan). The CDK app grants exactly these; `test/infra` checks the grants
 * against the template and against the SDK commands each function's bundle references.
 */
export const TABLE_ACCESS = {
  /** get, latest (Query), create (PutItem), lease and outbox (UpdateItem), failure notes (PutItem). */
  Decide: ["GetItem", "PutItem", "UpdateItem", "Query"],
  /** get, the conditional transition. */
  AutoAction: ["GetItem", "UpdateItem"],
  /** get, the set-once ledger. */
  ReviewIntake: ["GetItem", "UpdateItem"],
  /** the queue and the decisions view (Query on an index, BatchGetItem of a page), get, the conditional transition. */
  Review: ["GetItem", "UpdateItem", "Query", "BatchGetItem"],
  ReviewPage: ["GetItem", "UpdateItem", "Query", "BatchGetItem"],
  /** failure notes; the record a rule letter names (get, latest), to check the letter against it. */
  Replay: ["GetItem", "Query"],
  /** the sample of recent decisions (Query on the time index, BatchGetItem of the sample). */
  Drift: ["Query", "BatchGetItem"],
  /** each policy's pending count and oldest item (Query on the list index, keys only). */
  ReviewBacklog: ["Query"],
  /** reviewed decisions (Query on the list index, BatchGetItem of each page). */
  Recalibrate: ["Query", "BatchGetItem"],
  /** audit samples, pending (since a creation time) and reviewed (since a label time): Query on the list index, BatchGetItem of each page. */
  Audit: ["Query", "BatchGetItem"],
  /** the batch (PutItem, UpdateItem, GetItem) and the line of each id (a conditional PutItem, GetItem). */
  BatchIntake: ["GetItem", "PutItem", "UpdateItem"],
  /** the batch and its claims (GetItem, UpdateItem), its members a page at a time (Query). */
  BatchFiles: ["GetItem", "UpdateItem", "Query"],
  /** the fleet reading, overwritten each period (the decide function reads it with its GetItem). */
  CapacityFollower: ["PutItem"],
  /**
   * object records (GetItem, PutItem), the open objects the hold-back and the oldest-object age
   * read (Query, BatchGetItem); an item that cannot be parsed is rejected on the decide path (PutItem, UpdateItem).
   */
  AsyncSubmit: ["GetItem", "PutItem", "UpdateItem", "Query", "BatchGetItem"],
  /** the decide path (as Decide), object records (GetItem, PutItem, UpdateItem). */
  AsyncResults: ["GetItem", "PutItem", "UpdateItem", "Query"],
} as const satisfies Record<string, readonly TableAction[]>;

/**
 * The decisions table's indexes: how their keys spread writes, and how much one page may read.
 * Each index partition takes about 1,000 writes a second, and an index key is one partition.
 */
export const TABLE_INDEXES = {
  /**
   * Partitions per list and policy (decisions, pending, reviewed), chosen by a hash of the item
   * id: a policy's decisions may arrive at about 4,000 a second before one partition throttles.
   * Never lower it on a deployed table: readers would stop reading the higher shards.
   */
  shards: 4,
  /** Most index entries one page of the decisions view evaluates (its filters discard some). */
  pageReadBudget: 1_000,
  /** Keys per BatchGetItem (DynamoDB's limit). */
  batchGetKeys: 100,
  /** Index entries per query when a list is read to its end (reviewed labels, batch members). */
  scanPage: 500,
} as const;
