/**
 * How long an item the endpoint was too busy for stays out of sight before it comes back: its
 * queue's visibility timeout is set to a wait that doubles with each receive up to a ceiling, drawn
 * between half and all of it, so that items refused together come back spread out while the wait
 * still grows. The first wait is the one the fleet lets the item expect (backlog × seconds per
 * item ÷ instances, `fleet-reading.ts`) when a recent reading gives one, at least
 * `shortestFirstSeconds`: a refusal of a nearly idle fleet (two calls met on one instance) comes
 * back in seconds, one behind a long backlog about when its turn would come; without a reading,
 * `firstSeconds`. Pure: the caller passes the draw and the expected wait.
 */

/** The schedule: the first wait and the longest, in seconds. */
export interface OverloadBackoff {
  /** The first wait when no expected wait is known. */
  readonly firstSeconds: number;
  readonly maxSeconds: number;
  /** The shortest first wait an expected wait may set. @default firstSeconds (the expected wait is ignored) */
  readonly shortestFirstSeconds?: number;
}

/** SQS's longest visibility timeout (12 hours). */
const MAX_VISIBILITY_SECONDS = 43_200;

/** The first ceiling: the expected wait within its bounds, or the schedule's own first wait. */
function firstCeilingSeconds(schedule: OverloadBackoff, expectedWaitSeconds: number | undefined): number {
  const shortest = schedule.shortestFirstSeconds;
  if (shortest === undefined || expectedWaitSeconds === undefined || !Number.isFinite(expectedWaitSeconds))
    return schedule.firstSeconds;
  return Math.min(schedule.maxSeconds, Math.max(shortest, expectedWaitSeconds));
}

/**
 * The ceiling of the wait after receive number `receiveCount` (1 for the first): from the first
 * (`expectedWaitSeconds`, when known), doubling, capped.
 */
export function overloadCeilingSeconds(
  receiveCount: number,
  schedule: OverloadBackoff,
  expectedWaitSeconds?: number,
): number {
  const doublings = Math.max(0, Math.min(receiveCount - 1, 30));
  const first = firstCeilingSeconds(schedule, expectedWaitSeconds);
  return Math.min(schedule.maxSeconds, MAX_VISIBILITY_SECONDS, first * 2 ** doublings);
}

/**
 * The visibility timeout, in whole seconds (at least 1), for an overloaded item on receive number
 * `receiveCount`; `draw` is uniform in [0, 1); `expectedWaitSeconds` from a recent fleet reading.
 */
export function overloadVisibilitySeconds(
  receiveCount: number,
  schedule: OverloadBackoff,
  draw: number,
  expectedWaitSeconds?: number,
): number {
  const ceiling = overloadCeilingSeconds(receiveCount, schedule, expectedWaitSeconds);
  return Math.max(1, Math.ceil(ceiling * (0.5 + 0.5 * draw)));
}

/**
 * The shortest an item kept out by overload alone waits in all before receive number `receives`
 * (every draw at its lowest, the expected wait at its shortest): how long an overload must last
 * before that receive comes.
 */
export function shortestOverloadWaitSeconds(receives: number, schedule: OverloadBackoff): number {
  let total = 0;
  for (let receive = 1; receive < receives; receive++)
    total += overloadVisibilitySeconds(receive, schedule, 0, 0);
  return total;
}
