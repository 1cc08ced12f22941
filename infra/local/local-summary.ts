/**
 * What the local mode reports while it runs: where the items are (records by state, messages
 * waiting, dead letters) and the items waiting for review, read a page at a time so memory stays
 * at one page however many records the table holds.
 */
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { REVIEW } from "../../shared/domain/topology.ts";

/** Counts of where items are. */
export interface LocalSummary {
  readonly decided: number;
  readonly auto: number;
  readonly human: number;
  readonly reviewed: number;
  readonly rejected: number;
  readonly deadLetters: number;
  readonly waiting: number;
}

/** Where items are: records by state, messages waiting and dead letters. */
export async function summaryOf(
  shared: { store: DecisionStore; policies: PolicyRegistry },
  queues: { intake: MessageQueue; deadLetters: MessageQueue; batch?: MessageQueue | undefined },
): Promise<LocalSummary> {
  const waiting = async (queue: MessageQueue) => (await queue.depth()).visible;
  const count = await countByStatus(shared);
  return {
    decided:
      (count.auto_approved ?? 0) +
      (count.actioned ?? 0) +
      (count.pending_review ?? 0) +
      (count.reviewed ?? 0),
    auto: (count.auto_approved ?? 0) + (count.actioned ?? 0),
    human: count.pending_review ?? 0,
    reviewed: count.reviewed ?? 0,
    rejected: count.rejected ?? 0,
    deadLetters: await waiting(queues.deadLetters),
    waiting: (await waiting(queues.intake)) + (queues.batch ? await waiting(queues.batch) : 0),
  };
}

/** Every item waiting for review, oldest first (the queue's pages, to its end). */
export async function everyPending(shared: { store: DecisionStore; policies: PolicyRegistry }) {
  const records: DecisionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await shared.store.pageReviewQueue({
      policyIds: shared.policies.ids(),
      limit: REVIEW.pageSize,
      countCap: REVIEW.queueCountCap,
      ...(cursor ? { cursor } : {}),
    });
    records.push(...page.records);
    cursor = page.next;
  } while (cursor);
  return records;
}

/** How many records of each status the store holds, read a page at a time. */
async function countByStatus(shared: {
  store: DecisionStore;
  policies: PolicyRegistry;
}): Promise<Record<string, number>> {
  const count: Record<string, number> = {};
  for await (const record of everyDecision(shared.store, {
    ...allTime(new Date()),
    policyIds: shared.policies.ids(),
  }))
    count[record.status] = (count[record.status] ?? 0) + 1;
  return count;
}
