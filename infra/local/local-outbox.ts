/**
 * The local mode's outbox repair at start: the events the last run's records still owe (decided,
 * actioned, reviewed, revised) are sent from the records, each under the same rules as on the
 * deployed path (`shared/use-cases/outbox.ts`). And a decision whose event went out but whose
 * effect never happened (an `auto_approved` record not actioned, an escalation not queued for
 * review) is announced again under its own stable event id: its queues keep their messages across
 * a restart now, but a data folder from before that, or a message a stop cut off between the bus
 * and a queue, would otherwise leave it waiting forever. Its target applies it once (a
 * conditional transition), however many times it arrives. A decision a newer policy version of
 * the item has superseded is not announced again (its target would not apply it either).
 */

import type { Clock } from "../../shared/domain/clock.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_FUNCTION, LOCAL_OUTBOX_RETRY_MS, REVIEW } from "../../shared/domain/topology.ts";
import { newerDecision } from "../../shared/use-cases/event-authority.ts";
import { sendOwedEvents } from "../../shared/use-cases/outbox.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";

/** What the repair reads and sends with. */
type OutboxShared = {
  store: DecisionStore;
  policies: PolicyRegistry;
  publisher: PublishesEvents;
  now: Clock;
};

/**
 * Sends every event the `records` still owe (decided, actioned, reviewed, revised: the outbox),
 * the decision events under the publish lease; returns how many went out, and the records whose
 * decision event waits for a lease the last run still held. The last run's queues are gone, so
 * nothing else would send them.
 */
export async function publishLeftovers(
  shared: OutboxShared,
  records: AsyncIterable<DecisionRecord> | Iterable<DecisionRecord>,
  say: (line: string) => void = () => undefined,
): Promise<{ sent: number; waiting: DecisionRecord[] }> {
  const deps = { ...shared, publishLeaseMs: DECIDE_FUNCTION.publishLeaseMs, timings: REVIEW };
  const startedAt = shared.now().toISOString();
  let sent = 0;
  const waiting: DecisionRecord[] = [];
  for await (const record of records) {
    try {
      const outcome = await sendOwedEvents(record, deps);
      sent += outcome.sent.length;
      if (outcome.leaseHeld) waiting.push(record);
      // Decided by an earlier run (this run's own are on their way), announced, its effect not applied.
      if (record.createdAt < startedAt && awaitsEffect(record) && !(await newerDecision(record, shared))) {
        await shared.publisher.publish([eventFor(record)]);
        sent++;
      }
    } catch (error) {
      // One record that cannot make its event (a broken invariant) must not keep the others' back.
      say(`could not send the events ${record.itemId} owes: ${(error as Error).message}`);
    }
  }
  return { sent, waiting };
}

/**
 * Sends the leftovers of every record now, and again every few seconds for the records whose
 * decision event waits for a publish lease the last run held (at most one lease long, and only
 * those records are read again): every owed event goes out, and only under its lease.
 */
export function repairOutbox(
  shared: OutboxShared,
  say: (line: string) => void,
): { done: Promise<void>; stop: () => void } {
  let stopped = false;
  const done = (async () => {
    const until = Date.now() + DECIDE_FUNCTION.publishLeaseMs + LOCAL_OUTBOX_RETRY_MS;
    let records: AsyncIterable<DecisionRecord> | DecisionRecord[] = everyDecision(shared.store, {
      ...allTime(shared.now()),
      policyIds: shared.policies.ids(),
    });
    for (;;) {
      const { sent, waiting } = await publishLeftovers(shared, records, say);
      if (sent > 0) say(`published ${counted(sent, "event")} the last run had not sent before it stopped`);
      if (waiting.length === 0 || stopped || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, LOCAL_OUTBOX_RETRY_MS));
      const again = await Promise.all(waiting.map((record) => shared.store.get(record)));
      records = again.filter((record): record is DecisionRecord => record !== undefined);
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
    },
  };
}

/** Whether the record's event went out and the effect its route asks for has not happened yet. */
function awaitsEffect(record: DecisionRecord): boolean {
  if (record.eventPublished !== true) return false;
  return record.status === "auto_approved" || (record.status === "pending_review" && !record.reviewQueuedBy);
}
