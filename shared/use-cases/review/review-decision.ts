/**
 * The review path. A signed-in reviewer (identity from a verified token, never from the request
 * body) claims an escalated item for a few minutes and labels it; the label is appended to the
 * record's history and becomes its `label`, which calibration reads. Audit samples of a policy
 * with `auditReviewers: 2`, and certification samples of one with `certificationReviewers: 2`
 * (the default), need two different reviewers: agreement stores the label, disagreement marks the
 * item disputed for an admin; until then the item has no label, so a certificate counts it as a
 * drawn item not labelled. "Decision Reviewed" goes out once per stored label, with
 * an outbox flag so that a retried request sends what a failed one could not. Changes and undos:
 * shared/use-cases/review/revise-label.ts.
 */
import { publishedEvent } from "../../domain/contracts/events.ts";
import { batchesOf, type DecisionRecord, fieldOf } from "../../domain/decision-record.ts";
import type { RecordKey } from "../../domain/decision-store.ts";
import { DetailType } from "../../domain/events.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import {
  answerability,
  claimedByOther,
  isAdmin,
  type ReviewClaim,
  type Reviewer,
} from "../../domain/review/review.ts";
import { settleLabel } from "../batch-progress.ts";
import { answerGold } from "./gold-answer.ts";
import { offerable } from "./gold-items.ts";
import {
  checkLabel,
  clock,
  entryOf,
  guarded,
  type LabelInput,
  loadRecord,
  nowOf,
  type ReviewDependencies,
  ReviewError,
  type ReviewOutcome,
  requireReviewer,
} from "./review-common.ts";

export {
  type LabelInput,
  type ReviewDependencies,
  ReviewError,
  type ReviewOutcome,
} from "./review-common.ts";
export { mayRevise, reviseLabel } from "./revise-label.ts";

/**
 * Claims a pending item for `reviewer` for the claim period (renewing their own claim), made
 * only by an explicit request from someone who may answer it. When someone else holds it,
 * `claimed` is false and `holder` says who, until when, unless an admin asks to `takeOver`.
 */
export async function claimItem(
  key: RecordKey,
  reviewer: Reviewer,
  deps: ReviewDependencies,
  options: { readonly takeOver?: boolean } = {},
): Promise<{ claimed: boolean; holder?: ReviewClaim; record: DecisionRecord }> {
  requireReviewer(reviewer);
  if (options.takeOver && !isAdmin(reviewer))
    throw new ReviewError("only an admin may take over another reviewer's item", "forbidden");
  const { record } = await loadRecord(key, deps);
  const now = nowOf(deps).getTime();
  const may = answerability(record, reviewer, now);
  if (!may.ok && !may.holder) throw new ReviewError(may.reason.replace(/^This item/, key.itemId), "conflict");
  if (!may.ok && !options.takeOver) return { claimed: false, record, holder: may.holder! };
  const claim = {
    reviewerId: reviewer.id,
    reviewerName: reviewer.name,
    until: now + deps.timings.claimMs,
  };
  const claimed = await deps.store.claimReview(key, claim, now, options);
  const after = (await deps.store.get(key)) ?? record;
  return claimed
    ? { claimed, record: after }
    : { claimed, record: after, ...(after.claim ? { holder: after.claim } : {}) };
}

/**
 * Claims the oldest pending item `reviewer` may answer that nobody else holds, looking at most
 * `scan` items into the queue; undefined when there is none.
 */
export async function claimNext(
  reviewer: Reviewer,
  deps: ReviewDependencies,
  scan = 100,
): Promise<DecisionRecord | undefined> {
  requireReviewer(reviewer);
  let cursor: string | undefined;
  let seen = 0;
  do {
    // No count wanted: a cap of 0 stops counting at the first waiting item.
    const page = await deps.store.pageReviewQueue({
      policyIds: deps.policies.ids(),
      countCap: 0,
      limit: Math.min(25, scan - seen),
      ...(cursor ? { cursor } : {}),
    });
    for (const record of page.records) {
      if (!answerability(record, reviewer, nowOf(deps).getTime()).ok || !offerable(record, reviewer))
        continue;
      try {
        const { claimed, record: after } = await claimItem(record, reviewer, deps);
        if (claimed) return after;
      } catch (error) {
        // Labelled or disputed since the page was read: go on to the next one.
        if (!(error instanceof ReviewError)) throw error;
      }
    }
    seen += page.records.length;
    cursor = page.next;
  } while (cursor && seen < scan);
  return undefined;
}

/** Labels a pending item (or gives the admin's final label of a disputed one). */
export async function labelItem(
  input: LabelInput,
  reviewer: Reviewer,
  deps: ReviewDependencies,
  attempt = 0,
): Promise<ReviewOutcome> {
  requireReviewer(reviewer);
  const { record, policy } = await loadRecord(input, deps);
  checkLabel(policy, input.label);
  if (record.status === "reviewed") return labelAgain(record, input, deps);
  const now = nowOf(deps);
  refuseUnanswerable(record, input, reviewer, now);
  const step: LabelStep = {
    input,
    reviewer,
    deps,
    now,
    attempt,
    base: { from: "pending_review", reviewVersion: record.reviewVersion ?? 0 },
    retry: () => labelItem(input, reviewer, deps, attempt + 1),
  };
  // A gold item: the reviewer's answer is measured against the known one (told nothing more).
  if (record.gold) return answerGold({ ...record, gold: record.gold }, step, publishReviewed);
  return (
    (needsTwoReviewers(record, policy) ? await doubleLabel(record, step) : undefined) ?? finalLabel(step)
  );
}

/**
 * Whether the item's label needs two different reviewers before it is stored: an audit sample
 * under `auditReviewers: 2`, a certification sample under `certificationReviewers: 2`; a disputed
 * one waits for an admin's single label instead.
 */
function needsTwoReviewers(
  record: Pick<DecisionRecord, "reason" | "certification" | "disputed">,
  policy: Pick<Policy, "auditReviewers" | "certificationReviewers">,
): boolean {
  if (record.disputed) return false;
  const audit = record.reason === "audit_sample" && policy.auditReviewers === 2;
  return audit || (record.certification !== undefined && policy.certificationReviewers === 2);
}

/** What each step of a label needs. */
interface LabelStep {
  readonly input: LabelInput;
  readonly reviewer: Reviewer;
  readonly deps: ReviewDependencies;
  readonly now: Date;
  readonly attempt: number;
  readonly base: { readonly from: "pending_review"; readonly reviewVersion: number };
  readonly retry: () => Promise<ReviewOutcome>;
}

/** A label on a reviewed item: a retry of the same label (announced if it was not), else refused. */
async function labelAgain(record: DecisionRecord, input: LabelInput, deps: ReviewDependencies) {
  if (record.label !== input.label)
    throw new ReviewError(
      `${input.itemId} was already reviewed as "${record.label}" by ${record.reviewer}; change that label instead`,
      "conflict",
    );
  // The same label again: a retry. Announce it if the first call could not.
  if (!record.reviewEventPublished) await publishReviewed(record, deps);
  return { stored: false, final: true, record };
}

/** Refuses a label on an item that is not pending, held by someone else, or disputed for a non-admin. */
function refuseUnanswerable(record: DecisionRecord, input: LabelInput, reviewer: Reviewer, now: Date): void {
  if (record.status !== "pending_review")
    throw new ReviewError(`${input.itemId} is ${record.status}, not pending review`, "conflict");
  if (claimedByOther(record.claim, reviewer, now.getTime()))
    throw new ReviewError(
      `${input.itemId} is being reviewed by ${record.claim!.reviewerName} until ${clock(record.claim!.until)} UTC`,
      "conflict",
    );
  if (record.disputed && !isAdmin(reviewer))
    throw new ReviewError(
      `${input.itemId} is disputed between two reviewers: an admin gives the final label`,
      "forbidden",
    );
}

/**
 * A sample reviewed twice: the first label is kept aside, a second different one marks the item
 * disputed; undefined when the second agrees and the label becomes final. The refusal does not
 * say what kind of sample it is: reviewers are not told which items back a certificate.
 */
async function doubleLabel(record: DecisionRecord, step: LabelStep): Promise<ReviewOutcome | undefined> {
  const { input, reviewer, now } = step;
  const first = record.firstReview;
  if (first?.reviewerId === reviewer.id)
    throw new ReviewError(
      `${input.itemId} needs a second label from a different reviewer: you gave the first`,
      "conflict",
    );
  if (first && first.label === input.label) return undefined;
  const set = first
    ? { disputed: true }
    : {
        firstReview: {
          label: input.label,
          reviewerId: reviewer.id,
          reviewerName: reviewer.name,
          at: now.toISOString(),
        },
      };
  const action = first ? "label" : "first_label";
  const written = await guarded(
    step.attempt,
    input,
    {
      ...step.base,
      to: "pending_review",
      set,
      remove: ["claim"],
      entry: entryOf(reviewer, now, { action, label: input.label }),
    },
    now,
    step.deps,
    step.retry,
  );
  return "stored" in written ? written : { stored: true, final: false, record: written };
}

/** The label that settles the item: stored, announced, counted in its batch. */
async function finalLabel(step: LabelStep): Promise<ReviewOutcome> {
  const { input, reviewer, now, deps } = step;
  const written = await guarded(
    step.attempt,
    input,
    {
      ...step.base,
      to: "reviewed",
      set: {
        label: input.label,
        reviewer: reviewer.name,
        reviewerId: reviewer.id,
        reviewedAt: now.toISOString(),
        reviewEventPublished: false,
      },
      remove: ["claim"],
      entry: entryOf(reviewer, now, { action: "label", label: input.label }),
    },
    now,
    deps,
    step.retry,
  );
  if ("stored" in written) return written;
  await publishReviewed(written, deps);
  return { stored: true, final: true, record: (await deps.store.get(input)) ?? written };
}

/** Sends "Decision Reviewed" for the stored label and marks it sent. */
export async function publishReviewed(record: DecisionRecord, deps: ReviewDependencies): Promise<void> {
  await deps.publisher.publish([
    publishedEvent(
      DetailType.reviewed,
      `reviewed|${record.itemId}|${record.policyId}@${record.policyVersion}|${record.label}|r${record.reviewVersion ?? 0}`,
      {
        itemId: record.itemId,
        policyId: record.policyId,
        policyVersion: record.policyVersion,
        label: fieldOf(record, "label"),
        ...(record.chosen !== undefined ? { chosen: record.chosen } : {}),
        agreed: record.chosen === record.label,
        reviewer: fieldOf(record, "reviewer"),
        ...(record.reviewerId ? { reviewerId: record.reviewerId } : {}),
        reviewedAt: fieldOf(record, "reviewedAt"),
      },
    ),
  ]);
  await deps.store.transition(record, "reviewed", "reviewed", { reviewEventPublished: true });
  // A batch item: its label goes into the batch's results (once), and a fully reviewed batch is announced.
  if (record.label && deps.batches)
    for (const batchId of batchesOf(record))
      await settleLabel(deps.batches, batchId, record.itemId, record.label);
}
