/**
 * The auto-action target: applies a confident decision at most once, however often its
 * "Decision Made" event arrives. For the sample policies "applying" means recording the action on
 * the decision record (with the id of the event that caused it) and announcing it with "Item
 * Actioned"; the conditional status transition (auto_approved → actioned) is the ledger, so a
 * redelivered or re-sent event changes nothing.
 */

import type { DecisionStore } from "../domain/decision-store.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { DetailType, pipelineEvent } from "../domain/events.ts";

/** The "Decision Made" detail fields the target reads. */
export interface DecisionMadeDetail {
  readonly itemId: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly chosen: string;
  readonly route: string;
  /** The event's stable id. */
  readonly eventId: string;
}

/** What happened. */
export type ApplyOutcome = "actioned" | "already_actioned" | "not_automatic";

/** Applies the decision in `detail` exactly once. */
export async function applyDecision(
  detail: DecisionMadeDetail,
  deps: { store: DecisionStore; publisher: PublishesEvents; now?: () => Date },
): Promise<ApplyOutcome> {
  if (detail.route !== "auto") return "not_automatic";
  const now = (deps.now ?? (() => new Date()))();
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
  await deps.publisher.publish([
    pipelineEvent(
      DetailType.actioned,
      `actioned|${detail.itemId}|${detail.policyId}@${detail.policyVersion}`,
      {
        itemId: detail.itemId,
        policyId: detail.policyId,
        policyVersion: detail.policyVersion,
        action,
        causedBy: detail.eventId,
      },
    ),
  ]);
  await deps.store.transition(detail, "actioned", "actioned", { actionEventPublished: true });
  if (!applied) return "already_actioned";
  return "actioned";
}
