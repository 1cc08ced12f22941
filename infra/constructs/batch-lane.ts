/**
 * The batch lane's one knob, declared once: which lane consumes the batch queue (SageMaker
 * Asynchronous Inference, or the real-time endpoint through the decide function), its one default,
 * and the one refusal of a live lane on the async endpoint with the real-time batch lane. The
 * stack, the pipeline construct and the batch jobs read it (`-c batchLane` in `app.ts`).
 */

/** Which lane consumes the batch queue: the async endpoint's, or the decide function's. */
export type BatchLane = "async" | "realtime";

/** The batch lane wherever none is given: SageMaker Asynchronous Inference. */
export const DEFAULT_BATCH_LANE: BatchLane = "async";

/**
 * Refuses `endpointMode: "async"` (the live lane on the async endpoint, no real-time endpoint) with
 * the real-time batch lane, which needs the real-time endpoint it does not deploy.
 */
export function refuseAsyncLiveLaneWithRealtimeBatch(
  endpointMode: string | undefined,
  batchLane: BatchLane | undefined,
): void {
  if (endpointMode === "async" && (batchLane ?? DEFAULT_BATCH_LANE) === "realtime")
    throw new Error(
      "-c endpointMode=async runs the live lane on the async endpoint, which -c batchLane=realtime does not deploy: drop -c batchLane=realtime (the async batch lane is the default)",
    );
}
