/**
 * The local mode's outbox repair at start: the last run's queues did not survive it, so the
 * events its records still owe (decided, actioned, reviewed, revised) are sent from the records,
 * each under the same rules as on the deployed path (`shared/use-cases/outbox.ts`).
 */
import { allTime, type DecisionStore, everyDecision } from "../../shared/domain/decision-store.ts";
import type { PublishesEvents } from "../../shared/domain/events.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { DECIDE_FUNCTION, LOCAL_OUTBOX_RETRY_MS, REVIEW } from "../../shared/domain/topology.ts";
import { sendOwedEvents } from "../../shared/use-cases/outbox.ts";

/**
 * Sends every event a record still owes (decided, actioned, reviewed, revised: the outbox), the
 * decision events under the publish lease; returns how many went out, and how many wait for a
 * lease the last run still held. The last run's queues are gone, so nothing else would send them.
 */
export async function publishLeftovers(
  shared: {
    store: DecisionStore;
    policies: PolicyRegistry;
    publisher: PublishesEvents;
    now: () => Date;
  },
  say: (line: string) => void = () => undefined,
): Promise<{ sent: number; waiting: number }> {
  const deps = { ...shared, publishLeaseMs: DECIDE_FUNCTION.publishLeaseMs, timings: REVIEW };
  let sent = 0;
  let waiting = 0;
  for await (const record of everyDecision(shared.store, {
    ...allTime(new Date()),
    policyIds: shared.policies.ids(),
  })) {
    try {
      const outcome = await sendOwedEvents(record, deps);
      sent += outcome.sent.length;
      if (outcome.leaseHeld) waiting++;
    } catch (error) {
      // One record that cannot make its event (a broken invariant) must not keep the others' back.
      say(`could not send the events ${record.itemId} owes: ${(error as Error).message}`);
    }
  }
  return { sent, waiting };
}

/**
 * Sends the leftovers now, and again every few seconds while some wait for a publish lease the
 * last run held (at most one lease long): every owed event goes out, and only under its lease.
 */
export function repairOutbox(
  shared: Parameters<typeof publishLeftovers>[0],
  say: (line: string) => void,
): { done: Promise<void>; stop: () => void } {
  let stopped = false;
  const done = (async () => {
    const until = Date.now() + DECIDE_FUNCTION.publishLeaseMs + LOCAL_OUTBOX_RETRY_MS;
    for (;;) {
      const { sent, waiting } = await publishLeftovers(shared, say);
      if (sent > 0) say(`published ${sent} events the last run had not sent before it stopped`);
      if (waiting === 0 || stopped || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, LOCAL_OUTBOX_RETRY_MS));
    }
  })();
  return {
    done,
    stop: () => {
      stopped = true;
    },
  };
}
