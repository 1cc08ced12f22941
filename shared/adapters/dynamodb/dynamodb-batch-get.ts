/**
 * BatchGetItem for the decisions table's pages: up to 100 keys a call, the keys DynamoDB left
 * unprocessed (throttling, the 16 MB response limit) asked again with backoff, and the items
 * handed back in the order the keys were asked (BatchGetItem answers in any order).
 */
import type { BatchGetCommandInput, BatchGetCommandOutput } from "@aws-sdk/lib-dynamodb";
import { backoff } from "../../domain/backoff/backoff.ts";
import { StoreUnavailableError } from "../../domain/errors.ts";
import { TABLE_INDEXES } from "../../domain/topology.ts";

type Key = { pk: string; sk: string };
type Item = Record<string, unknown>;

/** Tries of the keys DynamoDB leaves unprocessed before giving up. */
const ATTEMPTS = 8;
const BASE_DELAY_MS = 25;

/** The items at `keys` in the order asked; keys with no item are left out. */
export async function getMany(
  keys: readonly Key[],
  send: (
    input: BatchGetCommandInput,
  ) => Promise<Pick<BatchGetCommandOutput, "Responses" | "UnprocessedKeys">>,
  tableName: string,
  consistent: boolean,
): Promise<Item[]> {
  const id = (key: { pk?: unknown; sk?: unknown }) => `${String(key.pk)}\u0000${String(key.sk)}`;
  const found = new Map<string, Item>();
  const unique = [...new Map(keys.map((k) => [id(k), { pk: k.pk, sk: k.sk }])).values()];
  for (let i = 0; i < unique.length; i += TABLE_INDEXES.batchGetKeys) {
    let pending: Key[] = unique.slice(i, i + TABLE_INDEXES.batchGetKeys);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > ATTEMPTS)
        throw new StoreUnavailableError(`decisions table batch get left ${pending.length} keys unprocessed`);
      await backoff(attempt, BASE_DELAY_MS);
      const output = await send({
        RequestItems: { [tableName]: { Keys: pending, ConsistentRead: consistent } },
      });
      for (const item of output.Responses?.[tableName] ?? []) found.set(id(item), item);
      pending = (output.UnprocessedKeys?.[tableName]?.Keys ?? []) as Key[];
    }
  }
  return keys.map((k) => found.get(id(k))).filter((item): item is Item => item !== undefined);
}
