/**
 * Pipeline shapes written by hand for the capacity model's unit tests: an M/M/c queue built from
 * the model's parts (the intake queue as the shared queue, one function run per instance), and
 * small variations of it.
 */
import type { PipelineShape } from "../../infra/capacity/shape.ts";

/**
 * `servers` instances, each fed by exactly one concurrent run of one item (batch size 1, no
 * batching window, routing to the least busy of all instances), no deadline, no admission limit, no scaling and
 * no timeouts that could bite: what waits, waits in the queue, first come first served.
 */
export function queueingShape(servers: number): PipelineShape {
  const forever = Number.POSITIVE_INFINITY;
  return {
    endpoint: {
      mode: "realtime",
      instanceType: "ml.c6i.xlarge",
      initialInstances: servers,
      minInstances: servers,
      maxInstances: servers,
      serverless: undefined,
      routing: "least-outstanding-exact",
      queueSize: 1_000_000,
      deadlineSeconds: Number.POSITIVE_INFINITY,
      deadlineScope: "call",
    },
    policies: [],
    intake: {
      batchSize: 1,
      batchingWindowSeconds: 0,
      maxConcurrency: servers,
      visibilityTimeoutSeconds: forever,
      maxReceiveCount: undefined,
    },
    batch: undefined,
    decide: {
      timeoutSeconds: forever,
      memoryMiB: 512,
      reservedConcurrency: undefined,
      endpointTimeoutSeconds: forever,
      endpointAttempts: 1,
      endpointBatchItems: 1,
    },
    overload: undefined,
  };
}

/** `base` with its parts replaced by `parts` (each part merged one level deep). */
export function variant(
  base: PipelineShape,
  parts: {
    endpoint?: Partial<PipelineShape["endpoint"]>;
    intake?: Partial<PipelineShape["intake"]>;
    decide?: Partial<PipelineShape["decide"]>;
    policies?: PipelineShape["policies"];
    overload?: PipelineShape["overload"];
  },
): PipelineShape {
  return {
    ...base,
    endpoint: { ...base.endpoint, ...parts.endpoint },
    intake: { ...base.intake, ...parts.intake },
    decide: { ...base.decide, ...parts.decide },
    ...(parts.policies ? { policies: parts.policies } : {}),
    ...("overload" in parts ? { overload: parts.overload } : {}),
  };
}
