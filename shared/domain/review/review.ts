/**
 * Human review as data: who a reviewer is (from a verified token, never from a form), the claim
 * that keeps two reviewers off one item, and the append-only history of labels, changes and
 * undos. Pure: the review use case (shared/use-cases/review/review-decision.ts) applies these rules
 * through the decision store's versioned write.
 */

/** A signed-in reviewer, as the identity provider vouches for them. */
export interface Reviewer {
  /** Stable subject id (the token's `sub`). */
  readonly id: string;
  /** Display name (name, email or username claim). */
  readonly name: string;
  /** Groups from the token: `reviewers` may label, `admins` may also change or undo any label. */
  readonly groups: readonly string[];
}

/** The group whose members may review. */
export const REVIEWERS_GROUP = "reviewers";
/** The group whose members may see everything and change or undo any label. */
export const ADMINS_GROUP = "admins";

/** Whether the reviewer is an admin. */
export function isAdmin(reviewer: Reviewer): boolean {
  return reviewer.groups.includes(ADMINS_GROUP);
}

/** Whether the reviewer may review at all (reviewers and admins). */
export function mayReview(reviewer: Reviewer): boolean {
  return isAdmin(reviewer) || reviewer.groups.includes(REVIEWERS_GROUP);
}

/** What a history entry records. */
export type ReviewAction = "label" | "first_label" | "change" | "undo";

/** One entry of a record's review history: appended, never rewritten. */
export interface ReviewEntry {
  readonly action: ReviewAction;
  /** The label after this entry (absent after an undo). */
  readonly label?: string;
  /** The label before it, for changes and undos. */
  readonly previousLabel?: string;
  readonly reviewerId: string;
  readonly reviewerName: string;
  readonly at: string;
}

/** Who holds an item, and until when (epoch milliseconds). */
export interface ReviewClaim {
  readonly reviewerId: string;
  readonly reviewerName: string;
  readonly until: number;
}

/** Whether `claim` keeps `reviewer` off the item at `now`. */
export function claimedByOther(claim: ReviewClaim | undefined, reviewer: Reviewer, now: number): boolean {
  return claim !== undefined && claim.until >= now && claim.reviewerId !== reviewer.id;
}

/** The parts of a decision record that decide whether someone may answer it. */
export interface AnswerableRecord {
  readonly status: string;
  readonly claim?: ReviewClaim | undefined;
  readonly disputed?: boolean | undefined;
  readonly firstReview?: { readonly reviewerId: string } | undefined;
  readonly reason?: string | undefined;
}

/**
 * Whether `reviewer` may answer the item at `now`: `ok`, or why not. `holder` is set when the
 * only obstacle is another reviewer's claim, which an admin may take over.
 */
export type Answerability =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly holder?: ReviewClaim };

/** Who may answer an item now: pending, not held by someone else, and the double-review rules. */
export function answerability(record: AnswerableRecord, reviewer: Reviewer, now: number): Answerability {
  if (record.status !== "pending_review")
    return { ok: false, reason: `This item is ${record.status.replace("_", " ")}.` };
  if (record.disputed && !isAdmin(reviewer))
    return { ok: false, reason: "Two reviewers disagreed: an admin gives the final label." };
  if (!record.disputed && record.firstReview?.reviewerId === reviewer.id)
    return {
      ok: false,
      // Said as an audit only where the page says so already: certification samples stay unmarked.
      reason: `You gave the first${record.reason === "audit_sample" ? " audit" : ""} label: a second, different reviewer answers now.`,
    };
  if (claimedByOther(record.claim, reviewer, now)) {
    const holder = record.claim!;
    const until = new Date(holder.until).toISOString().slice(11, 16);
    return { ok: false, reason: `${holder.reviewerName} is reviewing this item until ${until} UTC.`, holder };
  }
  return { ok: true };
}

/** How often two reviewers of the same sample (audit or certification) agreed. */
export interface ReviewerAgreement {
  /** Items labelled by two different reviewers. */
  readonly pairs: number;
  /** Of those, how many got the same label from both. */
  readonly agreed: number;
}

/**
 * Agreement over reviewed records and disputed ones: a record with a first label kept aside, or one
 * marked disputed, was reviewed twice; it agreed unless it was disputed (the second reviewer chose
 * differently; an admin settles it, or has settled it).
 */
export function reviewerAgreement(
  records: readonly { firstReview?: unknown; disputed?: boolean }[],
): ReviewerAgreement {
  const pairs = records.filter((r) => r.firstReview !== undefined || r.disputed === true);
  return { pairs: pairs.length, agreed: pairs.filter((r) => !r.disputed).length };
}
