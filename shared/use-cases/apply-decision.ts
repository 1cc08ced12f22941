/**
 * The auto-action target: applies a confident decision at most once, however often its
 * "Decision Made" event arrives. For the sample policies "applying" means recording the action on
 * the decision record (with the id of the event that caused it) and announcing it with "Item
 * Actioned"; the conditional status transition (auto_approved → actioned) is the ledger, so a
 * redelivered or re-sent event changes nothing.
 */

import { type DecisionMade, publishedEvent } from "../domain/contracts/events.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { DetailType } from "../domain/events.ts";

/** The "Decision Made" detail fields the target reads (the event's schema, `contracts/events.ts`). */
export type DecisionMadeDetail = Pick<
  DecisionMade,
  "itemId" | "policyId" | "policyVersion" | "chosen" | "route" | "eventId"
>;

/** What happened. */
export type ApplyOutcome = "actioned" | "already_actioned" | "not_automatic";

/** Applies the decision in `detail` exactly once. */
export async function applyDecision(
  detail: DecisionMadeDetail,
  deps: { store: DecisionStore; publisher: PublishesEvents; now: () => Date },
): Promise<ApplyOutcome> {
  if (detail.route !== "auto") return "not_automatic";
  const now = deps.now();
  const action = `${detail.policyId}:${detail.chosen}`;
  const applied = await deps.store.transition(detail, "auto_approved", "actioned", {
    action,
    actionedAt: now.toISOString(),
    actionEventId: detail.eventId,
    actionEventPublished: false,
  });
  if (!applied) {
    // Already actioned (a redelivered event): announce it only if that announcement failed.
    const record = await deps.store.get(detail);
    if (record?.status !== "actioned" || record.actionEventPublished) return "already_actioned";
  }
  await publishActioned({ ...detail, action, causedBy: detail.eventId }, deps);
  if (!applied) return "already_actioned";
  return "actioned";
}

/** What "Item Actioned" announces: the item, its policy version, the action and the event that caused it. */
export interface AppliedAction {
  readonly itemId: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly action: string;
  readonly causedBy: string;
}

/** Sends "Item Actioned" for an applied action and marks it sent on the record (its outbox flag). */
export async function publishActioned(
  applied: AppliedAction,
  deps: { store: DecisionStore; publisher: PublishesEvents },
): Promise<void> {
  await deps.publisher.publish([
    publishedEvent(
      DetailType.actioned,
      `actioned|${applied.itemId}|${applied.policyId}@${applied.policyVersion}`,
      {
        itemId: applied.itemId,
        policyId: applied.policyId,
        policyVersion: applied.policyVersion,
        action: applied.action,
        causedBy: applied.causedBy,
      },
    ),
  ]);
  await deps.store.transition(applied, "actioned", "actioned", { actionEventPublished: true });
}
