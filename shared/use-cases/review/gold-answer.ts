/**
 * A reviewer's label on a gold item (`gold-items.ts`): kept beside the known answer, and answered
 * to the reviewer as a first label of a sample reviewed twice is (nothing says it was gold). The item stays in the queue
 * for other reviewers until `reviews` of them have answered; it then settles with the known
 * answer, announced as any label is.
 */
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type { Reviewer } from "../../domain/review/review.ts";
import type { GoldMark } from "../../domain/review/review-gold.ts";
import {
  guarded,
  type LabelInput,
  type ReviewDependencies,
  ReviewError,
  type ReviewOutcome,
} from "./review-common.ts";

/** What a label step carries (review-decision.ts's own step). */
interface GoldStep {
  readonly input: LabelInput;
  readonly reviewer: Reviewer;
  readonly deps: ReviewDependencies;
  readonly now: Date;
  readonly attempt: number;
  readonly base: { readonly from: "pending_review"; readonly reviewVersion: number };
  readonly retry: () => Promise<ReviewOutcome>;
}

/**
 * Stores `step`'s label as the reviewer's gold answer; with the last answer wanted, settles the
 * item with the known answer and announces it through `publish`.
 */
export async function answerGold(
  record: DecisionRecord & { readonly gold: GoldMark },
  step: GoldStep,
  publish: (record: DecisionRecord, deps: ReviewDependencies) => Promise<void>,
): Promise<ReviewOutcome> {
  const { input, reviewer, now, deps } = step;
  const gold = record.gold;
  const mine = gold.answers.find((a) => a.reviewerId === reviewer.id);
  if (mine?.label === input.label) return { stored: false, final: record.status === "reviewed", record };
  if (mine)
    throw new ReviewError(
      `${input.itemId} was already labelled "${mine.label}" by you; it cannot be labelled again`,
      "conflict",
    );
  const answers = [
    ...gold.answers,
    { reviewerId: reviewer.id, reviewerName: reviewer.name, label: input.label, at: now.toISOString() },
  ];
  const settles = answers.length >= gold.reviews;
  const written = await guarded(
    step.attempt,
    input,
    {
      ...step.base,
      to: settles ? "reviewed" : "pending_review",
      set: {
        gold: { ...gold, answers },
        ...(settles
          ? {
              label: gold.answer,
              reviewer: gold.loadedBy,
              reviewerId: gold.loadedBy,
              reviewedAt: now.toISOString(),
              reviewEventPublished: false,
            }
          : {}),
      },
      remove: ["claim"],
    },
    now,
    deps,
    step.retry,
  );
  if ("stored" in written) return written;
  if (settles) await publish(written, deps);
  return { stored: true, final: settles, record: (await deps.store.get(input)) ?? written };
}
