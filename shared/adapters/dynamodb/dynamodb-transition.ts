/**
 * The conditional update of a status transition on the decisions table: the status (and, for an
 * effect, the choice and route) the record must hold, the new status and fields, and the moves
 * into or out of the pending and reviewed lists, all in one write.
 */
import type { RecordStatus } from "../../domain/decision-record.ts";
import type { RecordKey, TransitionCondition } from "../../domain/decision-store.ts";
import { listMoveClauses } from "./decision-index-keys.ts";

/** The UpdateItem input (without table and key) that moves `key` from `condition` to `to`. */
export function transitionUpdate(
  key: RecordKey,
  condition: TransitionCondition | { status: RecordStatus },
  to: RecordStatus,
  fields: Record<string, unknown>,
  now: Date,
) {
  const names: Record<string, string> = { "#status": "status", "#updatedAt": "updatedAt" };
  const values: Record<string, unknown> = {
    ":from": condition.status,
    ":to": to,
    ":now": now.toISOString(),
  };
  const conditions = ["#status = :from"];
  if ("chosen" in condition) {
    // The effect applies the decision the record holds, never one an event names.
    Object.assign(names, { "#chosen": "chosen", "#route": "route" });
    Object.assign(values, { ":chosen": condition.chosen, ":route": condition.route });
    conditions.push("#chosen = :chosen", "#route = :route");
  }
  const sets = ["#status = :to", "#updatedAt = :now"];
  for (const [i, [field, value]] of Object.entries(fields).entries()) {
    names[`#f${i}`] = field;
    values[`:f${i}`] = value;
    sets.push(`#f${i} = :f${i}`);
  }
  let removes: string[] = [];
  if (condition.status !== to) {
    // Into (or out of) the pending and reviewed lists, in the same conditional write.
    const reviewedAt = typeof fields.reviewedAt === "string" ? fields.reviewedAt : now.toISOString();
    const move = listMoveClauses(key, to, reviewedAt, fields.queuedAt);
    Object.assign(names, move.names);
    Object.assign(values, move.values);
    sets.push(...move.sets);
    removes = move.removes;
  }
  return {
    UpdateExpression: `SET ${sets.join(", ")}${removes.length ? ` REMOVE ${removes.join(", ")}` : ""}`,
    ConditionExpression: conditions.join(" AND "),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
