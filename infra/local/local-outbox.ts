/**
 * The local mode's outbox repair at start: the last run's queues did not survive it, so the
 * events its records still owe (decided, actioned, reviewed, revised) are sent from the records,
 * each under the same rules as on the deployed path (`shared/use-cases/outbox.ts`).
 */
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import { counted } from "../../shared/domain/plural.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_FUNCTION, LOCAL_OUTBOX_RETRY_MS, REVIEW } from "../../shared/domain/topology.ts";
import { sendOwedEvents } from "../../shared/use-cases/outbox.ts";

/** What the repair reads and sends with. */
type OutboxShared = {
  store: DecisionStore;
  policies: PolicyRegistry;
  publisher: PublishesEvents;
  now: () => Date;
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
  let sent = 0;
  const waiting: DecisionRecord[] = [];
  for await (const record of records) {
    try {
      const outcome = await sendOwedEvents(record, deps);
      sent += outcome.sent.length;
      if (outcome.leaseHeld) waiting.push(record);
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
