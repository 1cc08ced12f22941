/**
 * What the review use cases share: their dependencies (with the claim and change-window timings
 * the caller passes from infra/topology.ts), the error that carries an HTTP status, the outcome,
 * and the guarded versioned write that re-decides when another reviewer wrote first.
 */

import type { Clock } from "../../domain/clock.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type { DecisionStore, RecordKey, ReviewWrite } from "../../domain/decision-store.ts";
import type { PublishesEvents } from "../../domain/events.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { mayReview, type ReviewEntry, type Reviewer } from "../../domain/review/review.ts";
import type { BatchDependencies } from "../batch-progress.ts";

/** What the review use cases need. */
export interface ReviewDependencies {
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
  readonly policies: PolicyRegistry;
  /** The clock: set once where the handlers are composed (a test sets its own). */
  readonly now: Clock;
  /** How long opening an item claims it, and how long a reviewer may change or undo their own label. */
  readonly timings: { readonly claimMs: number; readonly changeWindowMs: number };
  /** Batch progress: labels on batch items are counted in their batch. */
  readonly batches?: BatchDependencies;
}

/** A label for an item. */
export interface LabelInput extends RecordKey {
  readonly label: string;
}

/**
 * Why a review was refused: not this reviewer's to do, no such item or policy, the item's state
 * forbids it now, or the input is not one the policy takes. The HTTP layer picks the status.
 */
export type ReviewRefusal = "forbidden" | "not_found" | "conflict" | "invalid";

/** The review could not be taken; `kind` says why. */
export class ReviewError extends Error {
  override name = "ReviewError";
  constructor(
    message: string,
    readonly kind: ReviewRefusal,
  ) {
    super(message);
  }
}

/** What a label, change or undo did. */
export interface ReviewOutcome {
  /** False for a retry that found its own write already stored. */
  readonly stored: boolean;
  /** True when the item now has its final label (false after a first audit label or a dispute). */
  readonly final: boolean;
  readonly record: DecisionRecord;
}

/** How many times a review re-decides after losing a race before giving up. */
export const MAX_RACES = 5;

/** The clock of the dependencies. */
export function nowOf(deps: ReviewDependencies): Date {
  return deps.now();
}

/** Refuses anyone in neither the reviewers nor the admins group. */
export function requireReviewer(reviewer: Reviewer): void {
  if (!mayReview(reviewer))
    throw new ReviewError(`${reviewer.name} is not in the reviewers or admins group`, "forbidden");
}

/** The record and its policy version, or a 404 naming what is missing. */
export async function loadRecord(
  key: RecordKey,
  deps: ReviewDependencies,
): Promise<{ record: DecisionRecord; policy: Policy }> {
  const policy = deps.policies.version(key.policyId, key.policyVersion);
  if (!policy) throw new ReviewError(`policy ${key.policyId}@${key.policyVersion} is unknown`, "not_found");
  const record = await deps.store.get(key);
  if (!record)
    throw new ReviewError(`no decision for ${key.itemId} under ${policy.id}@${policy.version}`, "not_found");
  return { record, policy };
}

/** Refuses a label that is not an option of the policy version. */
export function checkLabel(policy: Policy, label: string): void {
  if (!policy.options.some((option) => option.id === label))
    throw new ReviewError(
      `label: "${label}" is not an option of ${policy.id}@${policy.version} (${policy.options.map((o) => o.id).join(", ")})`,
      "invalid",
    );
}

/** A history entry by `reviewer` at `at`. */
export function entryOf(
  reviewer: Reviewer,
  at: Date,
  fields: Omit<ReviewEntry, "reviewerId" | "reviewerName" | "at">,
): ReviewEntry {
  return { ...fields, reviewerId: reviewer.id, reviewerName: reviewer.name, at: at.toISOString() };
}

/** "HH:MM" (UTC) of an epoch time. */
export const clock = (epochMs: number) => new Date(epochMs).toISOString().slice(11, 16);

/** Writes `write`, or re-reads and decides again when another write got there first. */
export async function guarded(
  attempt: number,
  key: RecordKey,
  write: ReviewWrite,
  now: Date,
  deps: ReviewDependencies,
  retry: () => Promise<ReviewOutcome>,
): Promise<DecisionRecord | ReviewOutcome> {
  if (await deps.store.writeReview(key, write, now)) return (await deps.store.get(key))!;
  if (attempt >= MAX_RACES)
    throw new ReviewError(`${key.itemId} keeps changing under this review; try again`, "conflict");
  return retry();
}
