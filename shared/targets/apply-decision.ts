/**
 * The auto-action target: applies a confident decision once. For the sample policies "applying"
 * means recording the action on the decision record and announcing it with "Item Actioned";
 * the status transition (auto_approved → actioned) makes a redelivered event a no-op.
 */
import type { DecisionStore } from "../adapters/decision-store.ts";
import type { PublishesEvents } from "../adapters/event-publisher.ts";
import { DetailType } from "../events.ts";

/** The "Decision Made" detail fields the target reads. */
export interface DecisionMadeDetail {
  readonly itemId: string;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly chosen: string;
  readonly route: string;
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
    actionEventPublished: false,
  });
  if (!applied) {
    // Already actioned (a redelivered event): announce it only if that announcement failed.
    const record = await deps.store.get(detail);
    if (record?.status !== "actioned" || record.actionEventPublished) return "already_actioned";
  }
  await deps.publisher.publish([
    {
      detailType: DetailType.actioned,
      eventKey: `actioned|${detail.itemId}|${detail.policyId}@${detail.policyVersion}`,
      detail: {
        itemId: detail.itemId,
        policyId: detail.policyId,
        policyVersion: detail.policyVersion,
        action,
        actionedAt: now.toISOString(),
      },
    },
  ]);
  await deps.store.transition(detail, "actioned", "actioned", { actionEventPublished: true });
  if (!applied) return "already_actioned";
  return "actioned";
}
