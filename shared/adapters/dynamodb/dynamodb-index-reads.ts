/**
 * Bounded reads of the decisions table's sharded indexes: one page of a list merged across its
 * partitions (each shard, each policy), and a count that stops at a cap. A page asks each
 * partition for a few entries at a time and refills only the partitions its merge has used up,
 * so it evaluates about `limit + partitions × chunk` index entries, and never more than its
 * budget plus one round; the entries are index keys, which the caller turns into records with
 * one BatchGetItem per hundred.
 */
import type { QueryCommandInput } from "@aws-sdk/lib-dynamodb";

/** A table item as the document client returns it. */
export type Item = Record<string, unknown>;

/** What the index reads call on the table. */
export interface IndexTable {
  query(input: Omit<QueryCommandInput, "TableName">): Promise<{
    Items?: Item[] | undefined;
    LastEvaluatedKey?: Item | undefined;
    Count?: number | undefined;
    ScannedCount?: number | undefined;
  }>;
}

/** An index's name and key attributes. */
export interface IndexKeys {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

/** A filter applied in the query (its names and values must not start with `#k` or `:k`). */
export interface QueryFilter {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** One partition to read, with the filter its entries must pass. */
export interface Partition {
  readonly key: string;
  readonly filter?: QueryFilter;
}

/** What {@link mergedPage} reads. */
export interface MergeSpec {
  readonly index: IndexKeys;
  readonly partitions: readonly Partition[];
  /** Sort-key bounds, both inclusive. */
  readonly lower: string;
  readonly upper: string;
  /** Newest (greatest sort key) first. */
  readonly descending: boolean;
  /** Continue after this sort key (a previous page's `next`). */
  readonly after?: string;
  readonly limit: number;
  /** Index entries evaluated before the page stops short (with a `next` that continues it). */
  readonly budget: number;
}

/** A merged page: index entries in list order, and where the next page starts. */
export interface MergedPage {
  readonly entries: Item[];
  readonly next?: string;
  /** Index entries the page's queries evaluated. */
  readonly evaluated: number;
}

interface Stream {
  readonly partition: Partition;
  readonly buffer: Item[];
  start?: Item | undefined;
  done: boolean;
  /** The sort key of the last entry evaluated, while there are more. */
  frontier?: string | undefined;
}

/** The bounds of a page that continues after `after`. */
function pageBounds(spec: MergeSpec): { lower: string; upper: string } {
  if (spec.after === undefined) return { lower: spec.lower, upper: spec.upper };
  if (spec.descending) return { lower: spec.lower, upper: spec.after < spec.upper ? spec.after : spec.upper };
  return { lower: spec.after > spec.lower ? spec.after : spec.lower, upper: spec.upper };
}

/** One page of a list merged across its partitions, in sort-key order. */
export async function mergedPage(table: IndexTable, spec: MergeSpec): Promise<MergedPage> {
  const { lower, upper } = pageBounds(spec);
  const sortKey = (item: Item) => String(item[spec.index.sortKey]);
  // Whether `a` comes before `b` in the list's order.
  const before = (a: string, b: string) => (spec.descending ? a > b : a < b);
  const streams: Stream[] = spec.partitions.map((partition) => ({
    partition,
    buffer: [],
    done: lower > upper,
  }));
  const chunk = Math.max(2, Math.ceil(spec.limit / Math.max(1, streams.length)) + 1);
  let evaluated = 0;
  const refill = async (stream: Stream) => {
    const filter = stream.partition.filter;
    const output = await table.query({
      IndexName: spec.index.name,
      KeyConditionExpression: "#kp = :kp AND #ks BETWEEN :klower AND :kupper",
      ExpressionAttributeNames: {
        "#kp": spec.index.partitionKey,
        "#ks": spec.index.sortKey,
        ...filter?.names,
      },
      ExpressionAttributeValues: {
        ":kp": stream.partition.key,
        ":klower": lower,
        ":kupper": upper,
        ...filter?.values,
      },
      ...(filter ? { FilterExpression: filter.expression } : {}),
      ScanIndexForward: !spec.descending,
      Limit: chunk,
      ...(stream.start ? { ExclusiveStartKey: stream.start } : {}),
    });
    evaluated += output.ScannedCount ?? output.Items?.length ?? 0;
    // The bound is inclusive: the entry the cursor names was on the previous page.
    stream.buffer.push(...(output.Items ?? []).filter((item) => sortKey(item) !== spec.after));
    stream.start = output.LastEvaluatedKey;
    stream.done = !output.LastEvaluatedKey;
    stream.frontier = output.LastEvaluatedKey ? sortKey(output.LastEvaluatedKey) : undefined;
  };
  const entries: Item[] = [];
  // Set once the budget is spent: the least advanced frontier of the partitions still unread.
  let stop: string | undefined;
  while (entries.length < spec.limit) {
    const empty = streams.filter((s) => !s.done && s.buffer.length === 0);
    if (empty.length > 0 && stop === undefined) {
      if (evaluated < spec.budget) {
        await Promise.all(empty.map(refill));
        continue;
      }
      stop = empty.map((s) => s.frontier!).reduce((a, b) => (before(a, b) ? a : b));
    }
    const ready = streams.filter((s) => s.buffer.length > 0);
    if (ready.length === 0) break;
    const head = ready.reduce((a, b) => (before(sortKey(a.buffer[0]!), sortKey(b.buffer[0]!)) ? a : b));
    // Past the stop, a partition not read that far may still hold entries that come first.
    if (stop !== undefined && !before(sortKey(head.buffer[0]!), stop)) break;
    entries.push(head.buffer.shift()!);
  }
  let next: string | undefined;
  if (entries.length === spec.limit) {
    if (streams.some((s) => !s.done || s.buffer.length > 0)) next = sortKey(entries.at(-1)!);
  } else if (stop !== undefined) next = stop;
  return { entries, evaluated, ...(next === undefined ? {} : { next }) };
}

/**
 * How many entries the partitions hold, counted up to `cap`: `capped` when there are more. The
 * queries return counts only, never items, and evaluate at most `cap + 1` entries in all.
 */
export async function countUpTo(
  table: IndexTable,
  index: IndexKeys,
  partitions: readonly string[],
  cap: number,
): Promise<{ count: number; capped: boolean }> {
  let count = 0;
  for (const key of partitions) {
    let start: Item | undefined;
    do {
      const output = await table.query({
        IndexName: index.name,
        KeyConditionExpression: "#kp = :kp",
        ExpressionAttributeNames: { "#kp": index.partitionKey },
        ExpressionAttributeValues: { ":kp": key },
        Select: "COUNT",
        Limit: cap + 1 - count,
        ...(start ? { ExclusiveStartKey: start } : {}),
      });
      count += output.Count ?? 0;
      start = output.LastEvaluatedKey;
    } while (start && count <= cap);
    if (count > cap) return { count: cap, capped: true };
  }
  return { count, capped: false };
}
