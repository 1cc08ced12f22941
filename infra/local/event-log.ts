/**
 * The local bus's log of recent events: each accepted event with a sequence number, the oldest
 * dropped once `capacity` are held, so a local mode that runs for days holds a bounded number.
 * `decide events` reads it over HTTP (`GET /local/events?after=N`, beside PutEvents on the bus's
 * port); a reader that fell further behind than the log holds is told how many it missed.
 */

/** An event with its place in the log. */
export interface LoggedEvent<Event> {
  readonly seq: number;
  readonly event: Event;
}

/** What a read after `after` returns. */
export interface EventLogPage<Event> {
  readonly events: readonly LoggedEvent<Event>[];
  /** Events after `after` that the log had already dropped. */
  readonly missed: number;
  /** The sequence number of the last event logged (0 before any). */
  readonly last: number;
}

/** A bounded, ordered log of events (the bus's envelopes). */
export class EventLog<Event> {
  readonly #held: LoggedEvent<Event>[] = [];
  #last = 0;

  /** @param capacity events held at most; older ones are dropped first. */
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("capacity must be at least 1");
  }

  /** Logs `event` as the next one; returns its sequence number. */
  append(event: Event): number {
    this.#last++;
    this.#held.push({ seq: this.#last, event });
    // Dropping in chunks keeps appends cheap: shift() on a large array copies it each time.
    if (this.#held.length > this.capacity * 1.25) this.#held.splice(0, this.#held.length - this.capacity);
    return this.#last;
  }

  /** The held events, oldest first. */
  events(): Event[] {
    return this.#held.slice(-this.capacity).map((logged) => logged.event);
  }

  /** Up to `limit` events logged after `after`, oldest first, and how many of those were dropped. */
  after(after: number, limit: number): EventLogPage<Event> {
    const held = this.#held.slice(-this.capacity);
    const first = held[0]?.seq ?? this.#last + 1;
    const from = Math.max(after + 1, first);
    const events = held.slice(from - first, from - first + limit);
    return { events, missed: Math.max(0, first - (after + 1)), last: this.#last };
  }
}
