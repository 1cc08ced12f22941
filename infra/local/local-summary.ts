/**
 * What the local mode reports while it runs: where the items are (records by state, messages
 * waiting, dead letters), read incrementally. One pass over the table at start counts what
 * earlier runs left; after that each refresh reads only the records decided and the labels given
 * since the last one (with an overlap that covers a record whose decision began before the last
 * refresh and was written after it), so a refresh costs what changed, not what the table holds.
 * One refresh runs at a time (a caller that asks during one gets its answer), and the totals only
 * grow: a restart starts from the table's own count, never below it.
 *
 * The counts: decided, auto, to people and rejected from the records as they were made (a
 * record's route never changes; decided = auto + to people); human from the review backlog now,
 * counted up to a cap; reviewed from the labels given (a label undone stays counted until the next
 * start), which include audit and certification samples of automated decisions, so they are shown
 * apart from the routes, never as a part of decided ({@link summaryText}).
 */

import type { Clock } from "../../shared/domain/clock.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { MessageQueue } from "../../shared/domain/message-queue.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_FUNCTION, REVIEW } from "../../shared/domain/topology.ts";

/** Counts of where items are. */
export interface LocalSummary {
  /** Decided items: `auto` + `toPeople`. */
  readonly decided: number;
  readonly auto: number;
  /** Decided items routed to people (waiting or labelled since). */
  readonly toPeople: number;
  /** Items waiting for a reviewer, counted up to {@link LocalSummary.humanCapped}. */
  readonly human: number;
  /** True when more than `human` wait (the backlog is counted up to a cap). */
  readonly humanCapped?: boolean;
  readonly reviewed: number;
  readonly rejected: number;
  readonly deadLetters: number;
  readonly waiting: number;
}

/** What the summary reads. */
export interface SummarySources {
  readonly store: DecisionStore;
  readonly policies: PolicyRegistry;
  readonly now: Clock;
  readonly queues: { intake: MessageQueue; deadLetters: MessageQueue; batch?: MessageQueue | undefined };
}

/**
 * How far back each refresh reads again: a record carries the time its decision began, which can
 * precede its write by as long as a decide invocation may run.
 */
const OVERLAP_MS = DECIDE_FUNCTION.timeoutSeconds * 1000;

/** Running totals, seeded from the table and moved on by what each refresh reads. */
export class LiveSummary {
  readonly #sources: SummarySources;
  readonly #totals = { decided: 0, auto: 0, toPeople: 0, reviewed: 0, rejected: 0 };
  /** Keys counted within the overlap (records by key, labels by key and review version), with their times. */
  readonly #recentRecords = new Map<string, string>();
  readonly #recentLabels = new Map<string, string>();
  #readUntil: string;
  #refreshing: Promise<LocalSummary> | undefined;

  private constructor(sources: SummarySources, readUntil: string) {
    this.#sources = sources;
    this.#readUntil = readUntil;
  }

  /** Counts what the table holds now (one pass, a page at a time) and returns the running summary. */
  static async start(sources: SummarySources): Promise<LiveSummary> {
    const until = sources.now().toISOString();
    const live = new LiveSummary(sources, until);
    // What the first refresh reads again must be known as counted.
    const overlap = overlapFrom(until);
    for await (const record of everyDecision(sources.store, {
      ...allTime(new Date(until)),
      ...policies(sources),
    })) {
      live.#countRecord(record, overlap);
      if (record.status === "reviewed") live.#countLabel(record, overlap);
    }
    return live;
  }

  /** The counts now; a call during a refresh shares it. */
  summary(): Promise<LocalSummary> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #refresh(): Promise<LocalSummary> {
    const { store, queues } = this.#sources;
    const until = this.#sources.now().toISOString();
    const since = overlapFrom(this.#readUntil);
    for await (const record of everyDecision(store, { since, until, ...policies(this.#sources) }))
      this.#countRecord(record, since);
    let pending = 0;
    let capped = false;
    for (const policyId of this.#sources.policies.ids()) {
      for await (const record of store.reviewedSince(policyId, since)) this.#countLabel(record, since);
      const backlog = await store.pendingOf(policyId, REVIEW.queueCountCap);
      pending += backlog.count;
      capped ||= backlog.capped === true;
    }
    this.#readUntil = until;
    forgetBefore(this.#recentRecords, since);
    forgetBefore(this.#recentLabels, since);
    const waiting = async (queue: MessageQueue) => (await queue.depth()).visible;
    const { decided, auto, toPeople, reviewed, rejected } = this.#totals;
    return {
      decided,
      auto,
      toPeople,
      human: pending,
      ...(capped ? { humanCapped: true } : {}),
      reviewed,
      rejected,
      deadLetters: await waiting(queues.deadLetters),
      waiting: (await waiting(queues.intake)) + (queues.batch ? await waiting(queues.batch) : 0),
    };
  }

  /** Counts a record once; one made at or after `recentFrom` is remembered, as a later refresh reads it again. */
  #countRecord(record: DecisionRecord, recentFrom: string): void {
    const key = keyOf(record);
    if (this.#recentRecords.has(key)) return;
    if (record.createdAt >= recentFrom) this.#recentRecords.set(key, record.createdAt);
    const totals = this.#totals;
    if (record.status === "rejected") totals.rejected++;
    else {
      totals.decided++;
      if (record.route === "auto") totals.auto++;
      else totals.toPeople++;
    }
  }

  /** Counts a label once (a label given again after an undo has a new review version). */
  #countLabel(record: DecisionRecord, recentFrom: string): void {
    const key = `${keyOf(record)}|${record.reviewVersion ?? 0}`;
    if (this.#recentLabels.has(key)) return;
    const at = record.reviewedAt ?? record.updatedAt;
    if (at >= recentFrom) this.#recentLabels.set(key, at);
    this.#totals.reviewed++;
  }
}

/**
 * The summary as one line whose parts add up: decided = auto + to people; the review queue (what
 * waits now, the labels given so far, audit samples' included) is a count of its own.
 */
export function summaryText(s: LocalSummary): string {
  const queue = `review queue ${s.human}${s.humanCapped ? "+" : ""} waiting, ${counted(s.reviewed, "label")} given`;
  return `decided ${s.decided} = auto ${s.auto} + to people ${s.toPeople}; ${queue}; rejected ${s.rejected}, waiting ${s.waiting}, in DLQ ${s.deadLetters}`;
}

const keyOf = (record: DecisionRecord) => `${record.itemId}|${record.policyId}|${record.policyVersion}`;

/** Where a refresh after one that read until `until` starts reading. */
function overlapFrom(until: string): string {
  return new Date(new Date(until).getTime() - OVERLAP_MS).toISOString();
}

function policies(sources: SummarySources): { policyIds: readonly string[] } {
  return { policyIds: sources.policies.ids() };
}

/** Drops the keys whose time is before `since`: a later refresh no longer reads them. */
function forgetBefore(recent: Map<string, string>, since: string): void {
  for (const [key, at] of recent) if (at < since) recent.delete(key);
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
