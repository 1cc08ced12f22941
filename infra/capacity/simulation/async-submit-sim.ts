/**
 * The async lane's submit step as its simulation (`async-sim.ts`) sees it: the objects a batch
 * becomes, when each reaches the step, and the hold-back that decides when the step hands one to
 * SageMaker. Kept apart so that the rule the model applies reads next to the product's.
 */
import { ASYNC_LANE, MEASURED_SECONDS_PER_ITEM, SIZING_MARGIN } from "../../../shared/domain/topology.ts";
import type { AsyncShape } from "../async-template.ts";

/** The lane's own timings outside the model: assumptions, small next to an object's minutes. */
export const ASYNC_OVERHEAD = {
  /** A submit invocation: two S3 writes and one InvokeEndpointAsync. */
  submitSeconds: 2,
  /** From an object's end to the result function's start: S3 upload, SNS, SQS, the poller. */
  notificationSeconds: 2,
  /** One item on the decide path in the result function (a table read, writes, an event). */
  resultSecondsPerItem: 0.05,
} as const;

/** How the submit step holds objects back: open items × `secondsPerItem` ÷ maximum instances ≤ TTL ÷ `margin`. */
export interface HoldBack {
  readonly secondsPerItem: number;
  readonly margin: number;
}

/**
 * The submit step's hold-back as the product applies it: the reference instance's measured
 * seconds per fresh item with the sizing margin (the numbers in `shared/domain/topology*`), at
 * the endpoint's maximum instance count.
 */
export const PRODUCT_HOLD_BACK: HoldBack = {
  secondsPerItem: MEASURED_SECONDS_PER_ITEM.fresh,
  margin: SIZING_MARGIN,
};

/**
 * Whether the submit step hands over an object of `size` items while `openItems` are open
 * (handed over, not yet settled): always when none is open (an object larger than the budget
 * would otherwise wait for ever), never past the budget; `false`: no hold-back.
 */
export function admitsObject(
  openItems: number,
  size: number,
  hold: HoldBack | false = PRODUCT_HOLD_BACK,
  maxInstances: number,
): boolean {
  if (hold === false || openItems === 0) return true;
  const seconds = ((openItems + size) * hold.secondsPerItem) / maxInstances;
  return seconds <= ASYNC_LANE.requestTtlSeconds / hold.margin;
}

/** The objects a batch of `items` becomes: their sizes, and when each reaches the submit step. */
export function objectsOf(shape: AsyncShape, items: number): { sizes: number[]; arrivals: number[] } {
  if (!(Number.isInteger(items) && items > 0))
    throw new RangeError(`items must be a positive integer, got ${items}`);
  const k = shape.itemsPerObject;
  const sizes = Array.from({ length: Math.ceil(items / k) }, (_, i) => Math.min(k, items - i * k));
  // Full objects go as soon as a submit invocation is free; the partial last one after the window.
  const arrivals = sizes.map((size, i) =>
    size === k
      ? (Math.floor(i / shape.submitConcurrency) + 1) * ASYNC_OVERHEAD.submitSeconds
      : shape.batchingWindowSeconds + ASYNC_OVERHEAD.submitSeconds,
  );
  return { sizes, arrivals };
}
