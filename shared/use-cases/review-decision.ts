/**
 * The review path: a reviewer's answer for an escalated item becomes its label, checked against
 * the policy version that decided it, stored once and announced with "Decision Reviewed".
 * Answering again with the same label is a no-op; a different label for an already reviewed
 * item is refused.
 */

import type { PublishesEvents } from "../adapters/event-publisher.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import { DetailType, pipelineEvent } from "../domain/events.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";

/** A reviewer's answer. */
export interface ReviewInput {
  readonly itemId: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly label: string;
  readonly reviewer: string;
}

/** The review could not be taken; `status` is the HTTP status to answer with. */
export class ReviewError extends Error {
  override name = "ReviewError";
  constructor(
    message: string,
    readonly status: 404 | 409 | 422,
  ) {
    super(message);
  }
}

/** The outcome: the record after the review, and whether this call stored it. */
export interface ReviewOutcome {
  readonly stored: boolean;
  readonly record: DecisionRecord;
}

/** Stores a review exactly once. */
export async function reviewDecision(
  input: ReviewInput,
  deps: { store: DecisionStore; publisher: PublishesEvents; policies: PolicyRegistry; now?: () => Date },
): Promise<ReviewOutcome> {
  if (!input.reviewer.trim()) throw new ReviewError("reviewer: must not be empty", 422);
  const policy = deps.policies.version(input.policyId, input.policyVersion);
  if (!policy) throw new ReviewError(`policy ${input.policyId}@${input.policyVersion} is unknown`, 404);
  if (!policy.options.some((option) => option.id === input.label)) {
    throw new ReviewError(
      `label: "${input.label}" is not an option of ${policy.id}@${policy.version} (${policy.options.map((o) => o.id).join(", ")})`,
      422,
    );
  }
  const record = await deps.store.get(input);
  if (!record)
    throw new ReviewError(`no decision for ${input.itemId} under ${policy.id}@${policy.version}`, 404);
  const now = (deps.now ?? (() => new Date()))();
  if (record.status === "reviewed") {
    if (record.label === input.label) {
      // Same answer again: a retry. Announce it if the first call could not.
      if (!record.reviewEventPublished) await publishReviewed(record, deps);
      return { stored: false, record };
    }
    throw new ReviewError(
      `${input.itemId} was already reviewed as "${record.label}" by ${record.reviewer}`,
      409,
    );
  }
  if (record.status !== "pending_review")
    throw new ReviewError(`${input.itemId} is ${record.status}, not pending review`, 409);
  const stored = await deps.store.transition(
    input,
    "pending_review",
    "reviewed",
    {
      label: input.label,
      reviewer: input.reviewer,
      reviewedAt: now.toISOString(),
      reviewEventPublished: false,
    },
    now,
  );
  if (!stored) return reviewDecision(input, deps); // raced with another reviewer: re-read and decide again
  const reviewed = (await deps.store.get(input))!;
  await publishReviewed(reviewed, deps);
  return { stored: true, record: reviewed };
}

async function publishReviewed(
  record: DecisionRecord,
  deps: { store: DecisionStore; publisher: PublishesEvents },
): Promise<void> {
  await deps.publisher.publish([
    pipelineEvent(
      DetailType.reviewed,
      `reviewed|${record.itemId}|${record.policyId}@${record.policyVersion}|${record.label}`,
      {
        itemId: record.itemId,
        policyId: record.policyId,
        policyVersion: record.policyVersion,
        label: record.label,
        chosen: record.chosen,
        agreed: record.chosen === record.label,
        reviewer: record.reviewer,
        reviewedAt: record.reviewedAt,
      },
    ),
  ]);
  await deps.store.transition(record, "reviewed", "reviewed", { reviewEventPublished: true });
}
