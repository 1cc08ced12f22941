/**
 * The clock every use case reads (`deps.now()`): the system's where the handlers, the command
 * line and the local mode are composed; a test passes its own. Every dependency that reads the
 * wall clock takes a `Clock`, whatever it then wants of it (an ISO string, epoch milliseconds:
 * `now().getTime()`), so there is one convention and a test sets the time one way. A monotonic
 * timer that only measures how long something took (`performance.now()`, as the command line's
 * progress lines use) is not a clock in this sense and stays a `() => number`.
 */

/** A clock: the current time. */
export type Clock = () => Date;

/** The system clock. */
export const systemClock: Clock = () => new Date();
