/**
 * The soak's final count, from the decision records (the authority): every item sent must have
 * exactly one record, and every effect its record asks for must have happened and been announced.
 */
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";

/** What the count found. */
export interface SoakCount {
  readonly sent: number;
  /** Sent, with no record. */
  readonly lost: number;
  /** Items with more than one record (one per item and policy is the rule). */
  readonly decidedTwice: number;
  /** Records whose decision event, action, review task or action event is missing. */
  readonly eventsMissing: number;
  readonly auto: number;
  readonly human: number;
  readonly rejected: number;
  /** A few of each problem, to look at. */
  readonly examples: { lost: string[]; decidedTwice: string[]; eventsMissing: string[] };
}

/** What a record still owes: its event, its action (auto), its review task (human), the action's event. */
export function owes(record: DecisionRecord): string | undefined {
  if (record.eventPublished !== true) return "decision event not sent";
  if (record.status === "auto_approved") return "automatic action not applied";
  if (record.status === "actioned" && record.actionEventPublished === false) return "Item Actioned not sent";
  if (record.status === "pending_review" && !record.reviewQueuedBy) return "not queued for review";
  return undefined;
}

/** The records of the items whose ids start with `prefix`, read a page at a time. */
export async function* soakRecords(
  store: DecisionStore,
  policyIds: readonly string[],
  prefix: string,
): AsyncGenerator<DecisionRecord> {
  for await (const record of everyDecision(store, { ...allTime(new Date()), policyIds }))
    if (record.itemId.startsWith(prefix)) yield record;
}

/** Counts lost, decided twice and missing events over the records of the sent ids. */
export async function countSoak(
  store: DecisionStore,
  policyIds: readonly string[],
  prefix: string,
  sent: ReadonlySet<string>,
): Promise<SoakCount> {
  const seen = new Map<string, number>();
  const missing: string[] = [];
  const tally = { auto: 0, human: 0, rejected: 0 };
  for await (const record of soakRecords(store, policyIds, prefix)) {
    seen.set(record.itemId, (seen.get(record.itemId) ?? 0) + 1);
    if (record.status === "rejected") tally.rejected++;
    else if (record.route === "auto") tally.auto++;
    else tally.human++;
    const owed = owes(record);
    if (owed) missing.push(`${record.itemId}: ${owed}`);
  }
  const lost = [...sent].filter((id) => !seen.has(id));
  const twice = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} (${n})`);
  return {
    sent: sent.size,
    lost: lost.length,
    decidedTwice: twice.length,
    eventsMissing: missing.length,
    ...tally,
    examples: { lost: lost.slice(0, 5), decidedTwice: twice.slice(0, 5), eventsMissing: missing.slice(0, 5) },
  };
}
