/**
 * The decide function's handling of an overloaded endpoint, which lives in its code rather than
 * the template: read from the topology (`DECIDE_QUEUES`: the overload backoff and the item
 * failure limit) when the topology has it, and applied to a template only when that template's
 * intake queue carries the topology's receive-count backstop, i.e. was synthesized from the same
 * code. An older template (or code without it) gets none: overload is then an ordinary failure.
 */
import { overloadVisibilitySeconds } from "../../shared/domain/backoff/overload-backoff.ts";
import * as topology from "../../shared/domain/topology.ts";
import type { LaneShape, OverloadShape } from "./shape.ts";

/** The numbers the overload handling is made of. */
export interface OverloadParameters {
  /** The first backoff, doubled per receive up to `maxSeconds`, drawn between half and all of it. */
  readonly firstSeconds: number;
  readonly maxSeconds: number;
  /** The shortest first backoff an expected wait may set (absent: code that ignores it). */
  readonly shortestFirstSeconds?: number;
  /** Item failures before the function dead-letters the item itself. */
  readonly maxItemFailures: number;
  /** SQS's receive limit the same code sets on the decide queues (its backstop). */
  readonly maxReceiveCount: number;
}

/** The overload handling described by `p`: the decide function's own schedule (`overload-backoff.ts`). */
export function overloadShape(p: OverloadParameters): OverloadShape {
  const schedule = {
    firstSeconds: p.firstSeconds,
    maxSeconds: p.maxSeconds,
    ...(p.shortestFirstSeconds !== undefined ? { shortestFirstSeconds: p.shortestFirstSeconds } : {}),
  };
  return {
    backoffSeconds: (receiveCount, draw, expectedWaitSeconds) =>
      overloadVisibilitySeconds(receiveCount, schedule, draw, expectedWaitSeconds),
    maxItemFailures: p.maxItemFailures,
  };
}

/** The topology's overload parameters, or undefined when this code has none. */
export function topologyOverload(
  source: Record<string, unknown> = topology as unknown as Record<string, unknown>,
): OverloadParameters | undefined {
  const queues = source.DECIDE_QUEUES as
    | {
        maxItemFailures?: number;
        maxReceiveCount?: number;
        overloadBackoff?: { firstSeconds?: number; maxSeconds?: number; shortestFirstSeconds?: number };
      }
    | undefined;
  const backoff = queues?.overloadBackoff;
  if (
    typeof queues?.maxItemFailures !== "number" ||
    typeof queues.maxReceiveCount !== "number" ||
    typeof backoff?.firstSeconds !== "number" ||
    typeof backoff.maxSeconds !== "number"
  )
    return undefined;
  return {
    firstSeconds: backoff.firstSeconds,
    maxSeconds: backoff.maxSeconds,
    ...(typeof backoff.shortestFirstSeconds === "number"
      ? { shortestFirstSeconds: backoff.shortestFirstSeconds }
      : {}),
    maxItemFailures: queues.maxItemFailures,
    maxReceiveCount: queues.maxReceiveCount,
  };
}

/** The overload handling that applies to a template whose intake lane is `intake`, if any. */
export function overloadFor(
  intake: LaneShape,
  parameters: OverloadParameters | undefined = topologyOverload(),
): OverloadShape | undefined {
  if (!parameters || intake.maxReceiveCount !== parameters.maxReceiveCount) return undefined;
  return overloadShape(parameters);
}
