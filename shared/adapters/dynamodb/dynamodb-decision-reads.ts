/**
 * The reads of the DynamoDB decision store, every one bounded: a page of the review queue (merged
 * across each policy's pending shards) with a capped count, a policy's backlog (count and oldest
 * item), the reviewed records since a label time, the pending ones since a decision time, a page of the decisions view (merged across the
 * shards of the policies asked for, filtered in the query), and the drift sample. Index queries
 * return keys; the records come from BatchGetItem, at most one page of them at a time.
 */
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type {
  DecisionFilter,
  DecisionPage,
  DecisionSample,
  PendingSummary,
  RecordPage,
} from "../../domain/decision-store.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";
import { decodeCursor, encodeCursor } from "../page-cursor.ts";
import { partitionsOf, timeOfSortKey } from "./decision-index-keys.ts";
import { LIST_INDEX, TIME_INDEX } from "./decisions-table.ts";
import {
  countUpTo,
  type IndexTable,
  type Item,
  mergedPage,
  type Partition,
  type QueryFilter,
} from "./dynamodb-index-reads.ts";

/** What the reads call on the table. */
export interface ReadAccess extends IndexTable {
  /** The items at these table keys, in the order asked, missing ones left out. */
  getMany(keys: readonly { pk: string; sk: string }[], consistent: boolean): Promise<Item[]>;
  readonly toRecord: (item: Item) => DecisionRecord;
}

/** Sort-key bounds that hold every entry (sort keys start with an ISO time). */
const EVERYTHING = { lower: "0", upper: "9" };

const keysOf = (entries: readonly Item[]) => entries.map((e) => ({ pk: String(e.pk), sk: String(e.sk) }));

/** The records of index entries, in their order. */
async function recordsOf(table: ReadAccess, entries: readonly Item[], consistent: boolean) {
  return (await table.getMany(keysOf(entries), consistent)).map(table.toRecord);
}

/** One page of the review queue, oldest first, with the capped count. */
export async function pageReviewQueue(
  table: ReadAccess,
  query: { policyIds: readonly string[]; limit: number; cursor?: string; countCap: number },
): Promise<RecordPage> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const partitions = query.policyIds.flatMap(partitionsOf.pending);
  const page = await mergedPage(table, {
    index: LIST_INDEX,
    partitions: partitions.map((key) => ({ key })),
    ...EVERYTHING,
    descending: false,
    ...(after ? { after } : {}),
    limit: query.limit,
    budget: TABLE_INDEXES.pageReadBudget,
  });
  // Read consistently: an item labelled since the index was read drops out instead of showing.
  const records = (await recordsOf(table, page.entries, true)).filter((r) => r.status === "pending_review");
  const total = await countUpTo(table, LIST_INDEX, partitions, query.countCap);
  return {
    records,
    total: total.count,
    ...(total.capped ? { capped: true } : {}),
    ...(page.next ? { next: encodeCursor(page.next) } : {}),
  };
}

/** A policy's backlog: the capped count, and the oldest entry of its pending shards. */
export async function pendingOf(
  table: ReadAccess,
  policyId: string,
  countCap: number,
): Promise<PendingSummary> {
  const partitions = partitionsOf.pending(policyId);
  const oldest = await mergedPage(table, {
    index: LIST_INDEX,
    partitions: partitions.map((key) => ({ key })),
    ...EVERYTHING,
    descending: false,
    limit: 1,
    budget: TABLE_INDEXES.pageReadBudget,
  });
  const count = await countUpTo(table, LIST_INDEX, partitions, countCap);
  const first = oldest.entries[0];
  return {
    count: count.count,
    ...(count.capped ? { capped: true } : {}),
    ...(first ? { oldestCreatedAt: timeOfSortKey(String(first[LIST_INDEX.sortKey])) } : {}),
  };
}

/** The reviewed records of a policy labelled at or after `since`, shard by shard, a page at a time. */
export function reviewedSince(
  table: ReadAccess,
  policyId: string,
  since: string,
): AsyncGenerator<DecisionRecord> {
  return listedSince(table, partitionsOf.reviewed(policyId), since, "reviewed");
}

/** The records of a policy waiting for review that were decided at or after `since`, likewise. */
export function pendingSince(
  table: ReadAccess,
  policyId: string,
  since: string,
): AsyncGenerator<DecisionRecord> {
  return listedSince(table, partitionsOf.pending(policyId), since, "pending_review");
}

/**
 * The records of list partitions whose sort key (a time first) is at or after `since`, still in
 * `status` when read (an item moved since the index was read is left out).
 */
async function* listedSince(
  table: ReadAccess,
  partitions: readonly string[],
  since: string,
  status: DecisionRecord["status"],
): AsyncGenerator<DecisionRecord> {
  for (const key of partitions) {
    let start: Item | undefined;
    do {
      const output = await table.query({
        IndexName: LIST_INDEX.name,
        KeyConditionExpression: "#kp = :kp AND #ks >= :since",
        ExpressionAttributeNames: { "#kp": LIST_INDEX.partitionKey, "#ks": LIST_INDEX.sortKey },
        ExpressionAttributeValues: { ":kp": key, ":since": since },
        Limit: TABLE_INDEXES.batchGetKeys,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      for (const record of await recordsOf(table, output.Items ?? [], false))
        if (record.status === status) yield record;
      start = output.LastEvaluatedKey;
    } while (start);
  }
}

const equals = (attribute: string, value: unknown, tag: string): QueryFilter => ({
  expression: `#${tag} = :${tag}`,
  names: { [`#${tag}`]: attribute },
  values: { [`:${tag}`]: value },
});

/** Both filters, or either, or none. */
function both(a: QueryFilter | undefined, b: QueryFilter | undefined): QueryFilter | undefined {
  if (!a || !b) return a ?? b;
  return {
    expression: `${a.expression} AND ${b.expression}`,
    names: { ...a.names, ...b.names },
    values: { ...a.values, ...b.values },
  };
}

/** The partitions a decisions page reads, each with the filter its entries must pass. */
function decisionPartitions(filter: DecisionFilter): Partition[] {
  const batch = filter.batchId ? equals("batchId", filter.batchId, "fb") : undefined;
  const route = filter.route ? equals("route", filter.route, "fr") : undefined;
  const policies = filter.policyId ? [filter.policyId] : filter.policyIds;
  const decidedFilter = both(batch, route);
  const decided = policies
    .flatMap(partitionsOf.decided)
    .map((key) => ({ key, ...(decidedFilter ? { filter: decidedFilter } : {}) }));
  if (filter.route) return decided;
  const rejectedFilter = both(filter.policyId ? equals("policyId", filter.policyId, "fp") : undefined, batch);
  const rejected = partitionsOf
    .rejected()
    .map((key) => ({ key, ...(rejectedFilter ? { filter: rejectedFilter } : {}) }));
  return [...decided, ...rejected];
}

/** One page of the decisions view, newest first. */
export async function pageDecisions(
  table: ReadAccess,
  filter: DecisionFilter,
  { limit, cursor }: { limit: number; cursor?: string },
): Promise<DecisionPage> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const page = await mergedPage(table, {
    index: TIME_INDEX,
    partitions: decisionPartitions(filter),
    // Sort keys are "<createdAt>|...": `since` sorts before its own entries, `until` after none of its.
    lower: filter.since,
    upper: filter.until,
    descending: true,
    ...(after ? { after } : {}),
    limit,
    budget: TABLE_INDEXES.pageReadBudget,
  });
  return {
    records: await recordsOf(table, page.entries, false),
    ...(page.next ? { next: encodeCursor(page.next) } : {}),
  };
}

/**
 * The drift sample: every shard of every slice of the window is a stream; each round asks every
 * stream still holding entries for an equal share of what is left of `size`, so a quiet window
 * is read whole and a busy one stops at `size` index entries evaluated.
 */
export async function sampleDecisions(table: ReadAccess, sample: DecisionSample): Promise<DecisionRecord[]> {
  const from = Date.parse(sample.since);
  const width = (Date.parse(sample.until) - from) / sample.slices;
  const bound = (i: number) => new Date(from + width * i).toISOString();
  let active = Array.from({ length: sample.slices }, (_, i) => i).flatMap((i) =>
    partitionsOf.decided(sample.policyId).map((key) => ({
      key,
      lower: bound(i),
      // A bare time sorts before its own entries: the next slice's start is not in this one.
      upper: i === sample.slices - 1 ? sample.until : bound(i + 1),
      start: undefined as Item | undefined,
    })),
  );
  const version = equals("policyVersion", sample.policyVersion, "fv");
  const entries: Item[] = [];
  let evaluated = 0;
  while (active.length > 0 && evaluated < sample.size) {
    const left = sample.size - evaluated;
    const share = Math.max(1, Math.floor(left / active.length));
    // Fewer entries left than streams: every k-th stream takes one.
    const step = Math.max(1, Math.ceil(active.length / left));
    const asked = active.filter((_, i) => i % step === 0);
    const outputs = await Promise.all(
      asked.map((stream) =>
        table.query({
          IndexName: TIME_INDEX.name,
          KeyConditionExpression: "#kp = :kp AND #ks BETWEEN :klower AND :kupper",
          FilterExpression: version.expression,
          ExpressionAttributeNames: {
            "#kp": TIME_INDEX.partitionKey,
            "#ks": TIME_INDEX.sortKey,
            ...version.names,
          },
          ExpressionAttributeValues: {
            ":kp": stream.key,
            ":klower": stream.lower,
            ":kupper": stream.upper,
            ...version.values,
          },
          Limit: share,
          ...(stream.start ? { ExclusiveStartKey: stream.start } : {}),
        }),
      ),
    );
    for (const [i, output] of outputs.entries()) {
      evaluated += output.ScannedCount ?? output.Items?.length ?? 0;
      entries.push(...(output.Items ?? []));
      asked[i]!.start = output.LastEvaluatedKey;
    }
    active = active.filter((stream) => !asked.includes(stream) || stream.start !== undefined);
  }
  const records: DecisionRecord[] = [];
  for (let i = 0; i < entries.length; i += TABLE_INDEXES.batchGetKeys)
    records.push(...(await recordsOf(table, entries.slice(i, i + TABLE_INDEXES.batchGetKeys), false)));
  return records;
}
