/**
 * How long an item the endpoint was too busy for stays out of sight before it comes back: its
 * queue's visibility timeout is set to a wait that doubles with each receive up to a ceiling, drawn
 * between half and all of it, so that items refused together come back spread out while the wait
 * still grows. Pure: the caller passes the draw.
 */

/** The schedule: the first wait and the longest, in seconds. */
export interface OverloadBackoff {
  readonly firstSeconds: number;
  readonly maxSeconds: number;
}

/** SQS's longest visibility timeout (12 hours). */
const MAX_VISIBILITY_SECONDS = 43_200;

/** The ceiling of the wait after receive number `receiveCount` (1 for the first): doubling, capped. */
export function overloadCeilingSeconds(receiveCount: number, schedule: OverloadBackoff): number {
  const doublings = Math.max(0, Math.min(receiveCount - 1, 30));
  return Math.min(schedule.maxSeconds, MAX_VISIBILITY_SECONDS, schedule.firstSeconds * 2 ** doublings);
}

/**
 * The visibility timeout, in whole seconds (at least 1), for an overloaded item on receive number
 * `receiveCount`; `draw` is uniform in [0, 1).
 */
export function overloadVisibilitySeconds(
  receiveCount: number,
  schedule: OverloadBackoff,
  draw: number,
): number {
  const ceiling = overloadCeilingSeconds(receiveCount, schedule);
  return Math.max(1, Math.ceil(ceiling * (0.5 + 0.5 * draw)));
}

/**
 * The shortest an item kept out by overload alone waits in all before receive number `receives`
 * (every draw at its lowest): how long an overload must last before that receive comes.
 */
export function shortestOverloadWaitSeconds(receives: number, schedule: OverloadBackoff): number {
  let total = 0;
  for (let receive = 1; receive < receives; receive++)
    total += overloadVisibilitySeconds(receive, schedule, 0);
  return total;
}
