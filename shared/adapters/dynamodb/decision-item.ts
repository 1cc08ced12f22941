/**
 * A decision record as an item of the decisions table. State and metadata are stored as JSON
 * strings, so any valid item can be stored (DynamoDB refuses maps nested past 32 levels, empty map
 * keys, numbers past 38 digits); reading an item back drops what only the table needs (its keys,
 * the publish lease, the index attributes) and parses them again. The store creates a record's
 * item with `toItem`, and every read (its own and those of `dynamodb-decision-reads.ts`)
 * turns an item back into a record with `stripKeys`.
 */
import type { DecisionRecord } from "../../domain/decision-record.ts";
import { INDEX_ATTRIBUTES } from "./decision-index-keys.ts";

/** The table item for a record: state and metadata as JSON text. */
export function toItem(record: DecisionRecord): Record<string, unknown> {
  const { state, metadata, ...rest } = record;
  return {
    ...rest,
    ...(state === undefined ? {} : { stateJson: JSON.stringify(state) }),
    ...(metadata === undefined ? {} : { metadataJson: JSON.stringify(metadata) }),
  };
}

/** The record an item holds: keys, publish lease and index attributes dropped, state and metadata parsed. */
export function stripKeys(item: Record<string, unknown>): DecisionRecord {
  const { pk: _pk, sk: _sk, publishLeaseUntil: _lease, stateJson, metadataJson, ...record } = item;
  for (const attribute of INDEX_ATTRIBUTES) delete record[attribute];
  // Records written before state was stored as text keep it as a map.
  if (typeof stateJson === "string") record.state = JSON.parse(stateJson);
  if (typeof metadataJson === "string") record.metadata = JSON.parse(metadataJson);
  return record as unknown as DecisionRecord;
}
