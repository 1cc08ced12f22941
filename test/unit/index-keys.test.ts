/**
 * How the decisions table's index keys spread writes (observation 8 of issue 24): a day of one
 * busy policy's decisions (80% automated and then actioned, 20% escalated and then reviewed)
 * is replayed through the index attributes each write sets, and the index writes are counted
 * per index key value, as DynamoDB would count them per partition. The old `byStatus` index put
 * about 80% of them on one key ("auto_approved", then "actioned"); a key value takes about 1,000
 * writes a second, so that capped the table near 100 items a second.
 */
import { describe, expect, it } from "vitest";
import {
  indexAttributesOf,
  listMoveClauses,
  shardOf,
} from "../../shared/adapters/dynamodb/decision-index-keys.ts";
import { LIST_INDEX, TIME_INDEX } from "../../shared/adapters/dynamodb/decisions-table.ts";
import type { DecisionRecord, RecordStatus } from "../../shared/domain/decision-record.ts";
import { TABLE_INDEXES } from "../../shared/domain/topology.ts";

const ITEMS = 20_000;

function record(i: number, status: RecordStatus): DecisionRecord {
  const at = new Date(Date.UTC(2026, 0, 1) + i * 50).toISOString();
  return {
    itemId: `T-${i}`,
    policyId: "ticket-routing",
    policyVersion: 1,
    status,
    route: status === "auto_approved" ? "auto" : "human",
    createdAt: at,
    updatedAt: at,
    eventPublished: false,
  };
}

describe("index keys", () => {
  it("spread one policy's writes evenly over its shards, and list only what someone reads", () => {
    const writes = new Map<string, number>();
    const write = (key: string | undefined) => {
      if (key) writes.set(key, (writes.get(key) ?? 0) + 1);
    };
    for (let i = 0; i < ITEMS; i++) {
      const escalated = i % 5 === 0;
      const created = indexAttributesOf(record(i, escalated ? "pending_review" : "auto_approved"));
      write(`time:${created[TIME_INDEX.partitionKey]}`);
      write(created[LIST_INDEX.partitionKey] && `list:${created[LIST_INDEX.partitionKey]}`);
      // The later status change: auto_approved → actioned touches no index key (the store leaves
      // the lists alone when neither status is listed); pending → reviewed moves the list entry.
      if (escalated) {
        const move = listMoveClauses(record(i, "reviewed"), "reviewed", created[TIME_INDEX.sortKey]!);
        write(`list:${created[LIST_INDEX.partitionKey]}`); // the pending entry leaves
        write(`list:${String(move.values[":listKey"])}`);
      }
    }
    const total = [...writes.values()].reduce((a, b) => a + b, 0);
    const hottest = Math.max(...writes.values());
    // Every shard of each list gets its share: the hottest key takes about 1/shards of the time index.
    expect(writes.size).toBe(TABLE_INDEXES.shards * 3);
    expect(hottest / total).toBeLessThan(1.2 / TABLE_INDEXES.shards);
    // An automated decision enters no list: only 20% of the items are ever in byList.
    const listed = [...writes.entries()].filter(([k]) => k.startsWith("list:pending"));
    expect(listed.reduce((a, [, n]) => a + n, 0)).toBe((ITEMS / 5) * 2);
  });

  it("pick a shard from the item id alone, the same for every version of an item", () => {
    const counts = Array.from({ length: TABLE_INDEXES.shards }, () => 0);
    for (let i = 0; i < 10_000; i++) counts[shardOf(`item-${i}`)]!++;
    for (const n of counts) expect(n).toBeGreaterThan((10_000 / TABLE_INDEXES.shards) * 0.9);
    const v1 = indexAttributesOf({ ...record(7, "auto_approved"), policyVersion: 1 });
    const v2 = indexAttributesOf({ ...record(7, "auto_approved"), policyVersion: 2 });
    expect(v1[TIME_INDEX.partitionKey]).toBe(v2[TIME_INDEX.partitionKey]);
    expect(v1[TIME_INDEX.sortKey]).not.toBe(v2[TIME_INDEX.sortKey]);
  });
});
