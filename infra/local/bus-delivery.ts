/**
 * How the local bus delivers an event: to every rule it matches, asynchronously, with a few tries
 * each, then to the rule's dead letter; and, given a journal, kept on disk from the moment the bus
 * accepts it until every matching rule has settled it (`journal.ts`), so that a stop of any kind
 * loses no event the bus accepted.
 */
import { type EventPattern, matchesPattern } from "../../shared/domain/event-pattern.ts";
import { JournaledMap } from "./journal.ts";

/** A rule as delivery sees it (`BusRule` in `event-bus.ts`), for events of type `E`. */
interface Rule<E> {
  readonly name: string;
  readonly pattern: EventPattern;
  readonly target: (event: E) => Promise<void>;
  readonly deadLetter?: (event: E, error: string) => Promise<void>;
}

/** Deliveries that failed every try. */
type Undeliverable<E> = { rule: string; event: E; error: string }[];

/**
 * Delivery through the journal: `keep` writes the accepted events some rule matches to disk
 * (before the bus answers, so an event it accepted is delivered even if the process dies then),
 * and `deliver` drops each once every rule it matched delivered or dead-lettered it (else the
 * next start tries again).
 */
export function keptDelivery<E extends { readonly id: string }>(
  rules: readonly Rule<E>[],
  options: { readonly journal?: string; readonly deliveryAttempts?: number },
  undeliverable: Undeliverable<E>,
  pending: Set<Promise<unknown>>,
) {
  const kept = JournaledMap.open<E>(options.journal);
  const deliverOnce = deliveryTo(rules, options.deliveryAttempts ?? 3, undeliverable, pending);
  const deliver = (event: E) => {
    const done = deliverOnce(event).then((settled) => settled && kept.delete(event.id));
    pending.add(done);
    void done.finally(() => pending.delete(done));
  };
  const keep = (accepted: readonly E[]) => {
    for (const event of accepted)
      if (rules.some((rule) => matchesPattern(rule.pattern, event))) kept.set(event.id, event);
  };
  /** Delivers again what an earlier run kept and had not settled; how many. */
  const recover = () => {
    const left = [...kept.entries()].map(([, event]) => event);
    for (const event of left) deliver(event);
    return left.length;
  };
  return { deliver, keep, recover, close: () => kept.close() };
}

/**
 * Delivers an event to every rule it matches, asynchronously (tracked in `pending`), each with
 * `attempts` tries; a delivery that fails every try is recorded in `undeliverable` and handed
 * to the rule's dead letter, when it has one. The promise says whether every matching rule
 * settled the event (delivered it, or put it in its dead letter).
 */
function deliveryTo<E>(
  rules: readonly Rule<E>[],
  attempts: number,
  undeliverable: Undeliverable<E>,
  pending: Set<Promise<unknown>>,
): (event: E) => Promise<boolean> {
  return (event) => {
    const deliveries: Promise<boolean>[] = [];
    for (const rule of rules) {
      if (!matchesPattern(rule.pattern, event)) continue;
      const delivery = (async () => {
        let error = "";
        for (let attempt = 1; attempt <= attempts; attempt++) {
          try {
            await rule.target(event);
            return true;
          } catch (e) {
            error = (e as Error).message;
            await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
          }
        }
        undeliverable.push({ rule: rule.name, event, error });
        if (!rule.deadLetter) return true;
        return rule.deadLetter(event, error).then(
          () => true,
          () => false,
        );
      })();
      pending.add(delivery);
      deliveries.push(delivery);
      void delivery.finally(() => pending.delete(delivery));
    }
    return Promise.all(deliveries).then((settled) => settled.every(Boolean));
  };
}
