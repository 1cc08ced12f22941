/**
 * Batch jobs: a file of items submitted as one thing with an id, exact progress counts, a
 * "Batch Completed" event and a results file. Every accepted item of a batch becomes one member
 * whose state is counted once (the counter moves in the same write that records the member's
 * state), so progress is exact without scanning and a redelivered item never counts twice.
 * Pure: the store port is below; the use cases are `shared/use-cases/batch-*.ts`.
 */
import type { DecisionRecord } from "./decision-record.ts";

/** A batch id: `b-` and 6 to 60 lowercase letters, digits or dashes. */
export const BATCH_ID_PATTERN = /^b-[0-9a-z-]{6,60}$/;

/** Where a batch is in its life. */
export type BatchStatus = "submitting" | "running" | "completed";

/** Exact counts of a batch. */
export interface BatchCounts {
  /** Lines read from the file (blank lines excluded). */
  readonly lines: number;
  /** Lines that passed validation and were queued. */
  readonly accepted: number;
  /** Lines refused at intake, with their reasons in the errors file. */
  readonly rejected: number;
  /** Accepted items decided (auto + human). */
  readonly decided: number;
  readonly auto: number;
  readonly human: number;
  /** Accepted items the pipeline refused (the endpoint or the store refused them). */
  readonly failed: number;
  /** Accepted items that reached the dead-letter queue (and were not decided since). */
  readonly deadLettered: number;
  /** Escalated items reviewers have labelled. */
  readonly reviewed: number;
}

/** An empty count. */
export const NO_COUNTS: BatchCounts = {
  lines: 0,
  accepted: 0,
  rejected: 0,
  decided: 0,
  auto: 0,
  human: 0,
  failed: 0,
  deadLettered: 0,
  reviewed: 0,
};

/** A batch. */
export interface BatchRecord {
  readonly batchId: string;
  readonly policyId: string;
  /** Where the file came from (an object key or a file name). */
  readonly source: string;
  readonly status: BatchStatus;
  readonly counts: BatchCounts;
  readonly createdAt: string;
  /** When intake finished reading the file (the accepted count is final from then). */
  readonly submittedAt?: string;
  /** While "submitting": until when the intake reading the file holds it (it renews this as it reads). */
  readonly intakeUntil?: string;
  readonly completedAt?: string;
  /** Object keys of the results and errors files, once written. */
  readonly results?: { readonly results: string; readonly errors: string };
  /** Whether "Batch Completed" and "Batch Reviewed" went out. */
  readonly completedEventPublished?: boolean;
  readonly reviewedEventPublished?: boolean;
  /** Bumped by each change the files must show once they are due (a label, a late decision). */
  readonly filesVersion?: number;
  /** Since when the files lag the members (a rewrite is asked for); absent while they are current. */
  readonly filesStaleSince?: string;
}

/** Starts the step that writes a batch's files (deployed: a message on the batch files queue). */
export interface RequestsBatchFiles {
  /** Asks for the files of `batchId` to be written, no sooner than `delaySeconds` from now. */
  request(batchId: string, delaySeconds?: number): Promise<void>;
}

/** A member's terminal state. */
export type MemberState = "auto" | "human" | "failed" | "dead_lettered";

/** One accepted item of a batch, as the results file shows it. */
export interface BatchMember {
  readonly itemId: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly state: MemberState;
  /** Route, chosen option, distribution, reason and record status, when decided. */
  readonly route?: string;
  readonly chosen?: string;
  readonly distribution?: Record<string, number>;
  readonly reason?: string;
  readonly status?: string;
  /** Why the item failed or was dead-lettered. */
  readonly problem?: string;
  /** The reviewer's label, once reviewed. */
  readonly label?: string;
}

/**
 * A decided member's record status as it stands now: the member keeps the status its decision
 * gave it, and a label counted on an escalated member (`recordLabel`) means its record was
 * reviewed since (an undone label removes it, and the record waits for review again).
 */
export function currentStatus(member: Pick<BatchMember, "status" | "label">): string | undefined {
  return member.label !== undefined && member.status === "pending_review" ? "reviewed" : member.status;
}

/** Every accepted item is in a terminal state, and intake has finished. */
export function isComplete(batch: Pick<BatchRecord, "status" | "counts">): boolean {
  const c = batch.counts;
  return batch.status !== "submitting" && c.decided + c.failed + c.deadLettered >= c.accepted;
}

/** Every escalated item of a complete batch has its label. */
export function isReviewed(batch: Pick<BatchRecord, "status" | "counts">): boolean {
  return isComplete(batch) && batch.counts.reviewed >= batch.counts.human;
}

/** The member a decision record stands for. */
export function memberOf(record: DecisionRecord): BatchMember {
  const base = { itemId: record.itemId, policyId: record.policyId, policyVersion: record.policyVersion };
  if (record.status === "rejected" || !record.route) {
    return {
      ...base,
      state: "failed",
      status: record.status,
      problem: (record.problems ?? []).map((p) => `${p.field}: ${p.message}`).join("; "),
    };
  }
  return {
    ...base,
    state: record.route,
    route: record.route,
    ...(record.chosen ? { chosen: record.chosen } : {}),
    ...(record.distribution ? { distribution: record.distribution } : {}),
    ...(record.reason ? { reason: record.reason } : {}),
    status: record.status,
    ...(record.label ? { label: record.label } : {}),
  };
}

/** How a member's state moves the counters (a dead letter later decided moves back out of it). */
export function countDelta(
  from: MemberState | undefined,
  to: MemberState,
): Partial<Record<keyof BatchCounts, number>> {
  const delta: Partial<Record<keyof BatchCounts, number>> = {};
  const bump = (key: keyof BatchCounts, by: number) => {
    delta[key] = (delta[key] ?? 0) + by;
  };
  const apply = (state: MemberState, by: number) => {
    if (state === "auto" || state === "human") {
      bump("decided", by);
      bump(state, by);
    } else if (state === "failed") bump("failed", by);
    else bump("deadLettered", by);
  };
  if (from) apply(from, -1);
  apply(to, 1);
  return delta;
}

/**
 * Whether a member may move from `from` to `to`: once terminal, only a dead letter moves (to
 * whatever a replay decided); everything else stays as first counted.
 */
export function mayMove(from: MemberState | undefined, to: MemberState): boolean {
  return from === undefined || (from === "dead_lettered" && to !== "dead_lettered");
}

/** The batch store port (the decisions table holds batches and members beside the records). */
export interface BatchStore {
  /** Creates the batch; false when the id is taken. */
  createBatch(batch: BatchRecord): Promise<boolean>;
  getBatch(batchId: string): Promise<BatchRecord | undefined>;
  /** The most recent batches, newest first. */
  listBatches(limit: number): Promise<BatchRecord[]>;
  /** Intake read the whole file: the line counts are final and the batch is running. */
  finishIntake(
    batchId: string,
    counts: Pick<BatchCounts, "lines" | "accepted" | "rejected">,
    now: Date,
  ): Promise<BatchRecord>;
  /**
   * Records the member's state and moves the batch's counters in one atomic write, unless the
   * member already holds a state it may not leave ({@link mayMove}); returns the batch after the
   * write, or undefined when nothing changed (the member was counted before).
   */
  recordMember(batchId: string, member: BatchMember): Promise<BatchRecord | undefined>;
  /** Sets the label of a decided member and counts it reviewed (once). */
  recordLabel(batchId: string, itemId: string, label: string): Promise<BatchRecord | undefined>;
  /**
   * A reviewer changed (`label`) or undid (undefined) a counted label: the member's label follows,
   * and an undo counts the member as not reviewed again. Undefined when the member had no label.
   */
  reviseLabel(batchId: string, itemId: string, label: string | undefined): Promise<BatchRecord | undefined>;
  /**
   * Every member (or those in the states `only` names), in item id order, a page at a time: the
   * files step streams them, so no caller ever holds a whole batch.
   */
  memberPages(batchId: string, only?: readonly MemberState[]): AsyncIterable<BatchMember[]>;
  /**
   * Records that `line` of the batch's file holds `itemId` unless another line does, in one
   * conditional write (intake's check for a repeated id): the line that holds it, which is
   * `line` for an id's first line, also when intake reads the same file again.
   */
  claimLine(batchId: string, itemId: string, line: number): Promise<number>;
  /**
   * Notes that the batch's files lag its members (bumps `filesVersion`); true when they were
   * current until this call, so the caller asks for one rewrite per stale period.
   */
  markFilesStale(batchId: string, now: Date): Promise<boolean>;
  /**
   * Notes that files written from the members as of `filesVersion` = `version` are current;
   * false when a change came since (they stay stale, and the writer asks again).
   */
  markFilesCurrent(batchId: string, version: number): Promise<boolean>;
  /**
   * Claims the right to announce `phase` ("completed" or "reviewed") until `until` (epoch ms):
   * true for one caller at a time, false once the phase's event went out or while another holds
   * an unexpired claim (a crashed holder's claim expires, and a redelivery takes it over).
   */
  claimAnnouncement(
    batchId: string,
    phase: "completed" | "reviewed",
    now: number,
    until: number,
  ): Promise<boolean>;
  /** Sets fields of the batch (status, completedAt, results, event flags). */
  updateBatch(batchId: string, fields: Partial<Omit<BatchRecord, "batchId" | "counts">>): Promise<void>;
}
