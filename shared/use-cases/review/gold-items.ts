/**
 * Gold items in the review path (`decide review gold --file gold.jsonl`): the lead names decided
 * items whose right answer they know; each joins the review queue as any other item does (an
 * automatic decision as a spot check), unmarked for reviewers. Each reviewer who answers it is
 * told nothing more than after any label; their answer is kept beside the known one, and once
 * `reviews` different reviewers have answered it settles with the known answer. The answers
 * measure each reviewer's accuracy (`reviewerAccuracyOf`); gold labels never back a certificate
 * (`reviewed-labels.ts` leaves them out).
 */

import type { Clock } from "../../domain/clock.ts";
import type { DecisionRecord } from "../../domain/decision-record.ts";
import type { DecisionStore } from "../../domain/decision-store.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import { isAdmin, type Reviewer } from "../../domain/review/review.ts";
import {
  answeredGold,
  GOLD_DEFAULT_REVIEWS,
  GOLD_MAX_REVIEWS,
  type GoldLine,
  type GoldMark,
  type ReviewerAccuracy,
  reviewerAccuracy,
} from "../../domain/review/review-gold.ts";

/** What loading gold items needs. */
export interface GoldDependencies {
  readonly store: DecisionStore;
  readonly policies: PolicyRegistry;
  readonly now: Clock;
}

/** What a load did: how many items joined the queue, were marked where they waited, or were gold already. */
export interface GoldLoad {
  readonly queued: number;
  readonly marked: number;
  readonly unchanged: number;
  readonly problems: { line: number; reason: string }[];
}

type Numbered = GoldLine & { readonly line: number };

/** The record a gold line names, or why it cannot be a gold item. */
async function recordOf(deps: GoldDependencies, g: Numbered): Promise<DecisionRecord | string> {
  const policy =
    g.version === undefined ? deps.policies.current(g.policy) : deps.policies.version(g.policy, g.version);
  if (!policy)
    return `policy: ${g.policy}${g.version === undefined ? "" : `@${g.version}`} is not a known policy version`;
  if (!policy.options.some((o) => o.id === g.answer))
    return `answer: "${g.answer}" is not an option of ${policy.id}@${policy.version} (${policy.options.map((o) => o.id).join(", ")})`;
  const record = await deps.store.get({
    itemId: g.itemId,
    policyId: policy.id,
    policyVersion: policy.version,
  });
  if (!record)
    return `itemId: no decision for "${g.itemId}" under ${policy.id}@${policy.version}: send the item through the pipeline first`;
  if (record.gold)
    return record.gold.answer === g.answer
      ? record
      : `answer: "${g.itemId}" is a gold item already, with the answer "${record.gold.answer}"`;
  if (record.certification || record.reason === "audit_sample")
    return `itemId: "${g.itemId}" is a drawn sample (audit or certification): its label must stay the reviewers' own`;
  if (record.status === "reviewed")
    return `itemId: "${g.itemId}" is labelled already: a gold item must be one no reviewer has answered`;
  if (record.firstReview || record.disputed) return `itemId: "${g.itemId}" has a reviewer's label already`;
  if (record.status !== "actioned" && record.status !== "pending_review")
    return `itemId: "${g.itemId}" is ${record.status}: only an automated or a waiting decision can be a gold item`;
  return record;
}

/**
 * Marks the named decisions as gold items with their known answers and puts automated ones into
 * the review queue (queued now, as a new item is). All or nothing: with any problem, nothing is
 * written and every problem is returned with its line.
 */
export async function loadGold(
  deps: GoldDependencies,
  lines: readonly Numbered[],
  options: { readonly loadedBy: string; readonly reviews?: number },
): Promise<GoldLoad> {
  const reviews = options.reviews ?? GOLD_DEFAULT_REVIEWS;
  const problems: { line: number; reason: string }[] = [];
  if (!Number.isInteger(reviews) || reviews < 1 || reviews > GOLD_MAX_REVIEWS)
    problems.push({
      line: 0,
      reason: `reviews: must be a whole number from 1 to ${GOLD_MAX_REVIEWS}, got ${reviews}`,
    });
  const found: DecisionRecord[] = [];
  for (const g of lines) {
    const r = await recordOf(deps, g);
    if (typeof r === "string") problems.push({ line: g.line, reason: r });
    else found.push(r);
  }
  if (problems.length) return { queued: 0, marked: 0, unchanged: 0, problems };
  const now = deps.now().toISOString();
  let [queued, marked, unchanged] = [0, 0, 0];
  for (const [i, r] of found.entries()) {
    if (r.gold) {
      unchanged++;
      continue;
    }
    const gold: GoldMark = {
      answer: lines[i]!.answer,
      reviews,
      loadedAt: now,
      loadedBy: options.loadedBy,
      answers: [],
    };
    if (r.status === "actioned") {
      if (await deps.store.transition(r, "actioned", "pending_review", { gold, queuedAt: now })) queued++;
      else
        problems.push({
          line: lines[i]!.line,
          reason: `itemId: "${r.itemId}" changed while loading; load it again`,
        });
    } else if (await deps.store.transition(r, "pending_review", "pending_review", { gold })) marked++;
    else
      problems.push({
        line: lines[i]!.line,
        reason: `itemId: "${r.itemId}" changed while loading; load it again`,
      });
  }
  return { queued, marked, unchanged, problems };
}

/** Whether `reviewer` may be offered the item: anything but a gold item they answered already. */
export function offerable(record: Pick<DecisionRecord, "gold">, reviewer: Reviewer): boolean {
  return !answeredGold(record.gold, reviewer.id);
}

/** Each reviewer's accuracy on the gold items of `policyId` answered (or settled) since `since`. */
export async function reviewerAccuracyOf(
  store: DecisionStore,
  policyId: string,
  since = "0",
): Promise<ReviewerAccuracy[]> {
  const gold: DecisionRecord[] = [];
  for await (const r of store.pendingSince(policyId, "0")) if (r.gold) gold.push(r);
  for await (const r of store.reviewedSince(policyId, since)) if (r.gold) gold.push(r);
  return reviewerAccuracy(gold);
}

/**
 * A record as `viewer` may see it. An admin (the lead) sees everything. Anyone else never sees
 * that an item is gold: its known answer and the others' answers are left out, and a gold item
 * they answered reads as a sample waiting for its second reviewer (as a certification sample
 * does after its first label).
 */
export function viewedBy(record: DecisionRecord, viewer: Reviewer): DecisionRecord {
  if (!record.gold || isAdmin(viewer)) return record;
  const { gold, ...rest } = record;
  const mine = gold.answers.find((a) => a.reviewerId === viewer.id);
  if (!mine || record.status !== "pending_review") return rest;
  return {
    ...rest,
    firstReview: {
      label: mine.label,
      reviewerId: mine.reviewerId,
      reviewerName: mine.reviewerName,
      at: mine.at,
    },
  };
}
