/**
 * The outbox: every event a decision record still owes. Each step that changes a record and
 * announces it (decided, actioned, reviewed, revised) writes the change with a "published: false"
 * flag, sends the event, then sets the flag; a crash in between leaves the flag unset, and this
 * step sends what is owed. The decision event goes under the publish lease, as on the decide path,
 * so two workers never send it at once; every event carries a stable id, so a repeat is harmless.
 * The deployed pipeline repairs on redelivery; the local mode also runs this over its records
 * when it starts (a stop between a record and its event leaves nothing to redeliver). Version
 * order at the record: a record whose item a newer policy version has decided since owes nothing
 * any more (`newerDecision`): sending its action or decision now would announce it after the
 * newer one, as if it came later.
 */
import { type DecisionRecord, fieldOf } from "../domain/decision-record.ts";
import { publishActioned } from "./apply-decision.ts";
import type { DecideDependencies } from "./decide-message.ts";
import { newerDecision } from "./event-authority.ts";
import { ensurePublished } from "./record-event.ts";
import type { ReviewDependencies } from "./review/review-common.ts";
import { publishReviewed } from "./review/review-decision.ts";
import { publishRevised } from "./review/revise-label.ts";

/** What sending owed events needs: the store and publisher, the publish lease, and the review path's settings. */
export type OutboxDependencies = Pick<DecideDependencies, "store" | "publisher" | "publishLeaseMs" | "now"> &
  ReviewDependencies;

/** The events a record owes, by detail type. */
export type OwedEvent =
  | "Decision Made"
  | "Decision Rejected"
  | "Item Actioned"
  | "Decision Reviewed"
  | "Decision Review Revised";

/** The events `record` still owes (its outbox flags that are unset). */
export function owedEvents(record: DecisionRecord): OwedEvent[] {
  const owed: OwedEvent[] = [];
  if (!record.eventPublished) owed.push(record.status === "rejected" ? "Decision Rejected" : "Decision Made");
  if (record.status === "actioned" && record.actionEventPublished === false) owed.push("Item Actioned");
  if (record.status === "reviewed" && record.reviewEventPublished === false) owed.push("Decision Reviewed");
  if (record.revisionEventPublished === false && record.lastRevision) owed.push("Decision Review Revised");
  return owed;
}

/**
 * Sends what `record` owes, in the order the changes were made; returns what it sent, and
 * whether the decision event waits for another worker's publish lease (nothing after it is sent
 * then: the decision event goes first). Nothing is sent for a record a newer version superseded.
 */
export async function sendOwedEvents(
  record: DecisionRecord,
  deps: OutboxDependencies,
): Promise<{ sent: OwedEvent[]; leaseHeld: boolean }> {
  const sent: OwedEvent[] = [];
  const owed = owedEvents(record);
  if (owed.length > 0 && (await newerDecision(record, deps))) return { sent, leaseHeld: false };
  for (const event of owed) {
    if (event === "Decision Made" || event === "Decision Rejected") {
      if (!(await ensurePublished(record, deps))) return { sent, leaseHeld: true };
    } else if (event === "Item Actioned")
      await publishActioned(
        { ...record, action: fieldOf(record, "action"), causedBy: fieldOf(record, "actionEventId") },
        deps,
      );
    else if (event === "Decision Reviewed") await publishReviewed(record, deps);
    else await publishRevised(record, deps);
    sent.push(event);
  }
  return { sent, leaseHeld: false };
}
