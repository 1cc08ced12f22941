/**
 * The clock every use case reads (`deps.now()`): the system's where the handlers, the command
 * line and the local mode are composed; a test passes its own.
 */

/** A clock: the current time. */
export type Clock = () => Date;

/** The system clock. */
export const systemClock: Clock = () => new Date();
