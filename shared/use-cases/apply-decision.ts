/**
 * The auto-action target: applies a confident decision at most once, however often its
 * "Decision Made" event arrives. For the sample policies "applying" means recording the action on
 * the decision record (with the id of the event that caused it) and announcing it with "Item
 * Actioned"; the conditional status transition (auto_approved → actioned, on the record's own
 * choice and route) is the ledger, so a redelivered or re-sent event changes nothing. What is
 * applied is read from the record, never from the event: an event that is not the one its record
 * stands for, or a choice the record's policy never automates, is refused
 * (`event-authority.ts`). Version order at the record: once a newer policy version of the item
 * holds a decision, an older version's event is neither applied nor announced (`superseded`),
 * checked before the action and again after it (a newer decision made meanwhile keeps the older
 * action unannounced, so "Item Actioned" never goes out for an older version after a newer one).
 */

import type { Clock } from "../domain/clock.ts";
import { publishedEvent } from "../domain/contracts/events.ts";
import type { DecisionStore } from "../domain/decision-store.ts";
import type { PublishesEvents } from "../domain/events.ts";
import { DetailType } from "../domain/events.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { type DecisionMadeDetail, newerDecision, verifiedRecord } from "./event-authority.ts";

/** What happened. */
export type ApplyOutcome = "actioned" | "already_actioned" | "not_automatic" | "superseded";

/** What {@link applyDecision} needs. */
export interface ApplyDependencies {
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
  /** Which options each policy version may automate. */
  readonly policies: PolicyRegistry;
  readonly now: Clock;
}

/** Applies the decision the record behind `detail` holds, exactly once. */
export async function applyDecision(
  detail: DecisionMadeDetail,
  deps: ApplyDependencies,
): Promise<ApplyOutcome> {
  if (detail.route !== "auto") return "not_automatic";
  const record = await verifiedRecord(detail, "auto", deps);
  if (await newerDecision(record, deps)) return "superseded";
  const chosen = record.chosen!;
  const applied = await deps.store.transition(
    record,
    { status: "auto_approved", chosen, route: "auto" },
    "actioned",
    {
      action: `${record.policyId}:${chosen}`,
      actionedAt: deps.now().toISOString(),
      actionEventId: detail.eventId,
      actionEventPublished: false,
    },
  );
  // A newer version decided while this one was applied: its decision stands, this one stays unannounced.
  if (applied && (await newerDecision(record, deps))) return "superseded";
  // Already actioned (a redelivered event): announce it only if that announcement failed.
  const actioned = applied ? undefined : await deps.store.get(record);
  if (!applied && (actioned?.status !== "actioned" || actioned.actionEventPublished !== false))
    return "already_actioned";
  await publishActioned(
    {
      itemId: record.itemId,
      policyId: record.policyId,
      policyVersion: record.policyVersion,
      action: actioned?.action ?? `${record.policyId}:${chosen}`,
      causedBy: actioned?.actionEventId ?? detail.eventId,
    },
    deps,
  );
  return applied ? "actioned" : "already_actioned";
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
