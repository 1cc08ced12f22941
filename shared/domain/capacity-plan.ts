/**
 * The capacity plan: the numbers that must fit together, derived from the topology's settings
 * (`topology.ts`) and how the endpoint is provisioned. The decide function's event source
 * mappings, its batch size, the endpoint container's admission queue and deadline, and the target
 * of the endpoint's scaling; the CDK app, the local mode and the capacity model all read them here.
 */
import { intakeConcurrencyFor } from "./fleet-reading.ts";
import {
  BATCH_LANE,
  DECIDE_FUNCTION,
  ENDPOINT_DEADLINE_MS,
  ENDPOINT_SCALING,
  LAMBDA_MIN_CONCURRENCY,
  MEASURED_SECONDS_PER_ITEM,
  SIZING_MARGIN,
} from "./topology.ts";

/** How the deployed endpoint is provisioned: what the capacity numbers below are derived from. */
export interface EndpointProvisioning {
  readonly mode: "realtime" | "serverless";
  /** Instances at the scaling minimum (real-time). */
  readonly minInstances: number;
  /** Instances at the scaling maximum (real-time), or the serverless MaxConcurrency. */
  readonly maxInstances: number;
  /** Concurrent batch-lane invocations asked for at deploy. @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
  /** Seconds one instance takes per item. @default MEASURED_SECONDS_PER_ITEM.fresh */
  readonly secondsPerItem?: number;
}

/**
 * The target of `ConcurrentRequestsPerModel` per instance: the utilization of its one request slot
 * at which an average request still finishes within the endpoint's deadline, queueing included
 * (M/D/1: Poisson arrivals, a fixed `batch` service time S, mean wait rho*S / (2(1 - rho)); the
 * wait plus S within the deadline D gives rho <= 2(D - S) / (S + 2(D - S))), capped at
 * `maxUtilization`, rounded down to hundredths. `secondsPerItem` is the measured time of one
 * fresh item (`capacity/measured-times.json`).
 */
export function concurrentRequestsTarget(secondsPerItem: number): number {
  const service = DECIDE_FUNCTION.endpointBatchItems * secondsPerItem;
  const slack = ENDPOINT_DEADLINE_MS / 1000 - service;
  if (slack <= 0)
    throw new RangeError(
      `a full batch takes ${service.toFixed(1)} s, over the endpoint's ${ENDPOINT_DEADLINE_MS} ms deadline`,
    );
  const utilization = Math.min(ENDPOINT_SCALING.maxUtilization, (2 * slack) / (service + 2 * slack));
  return Math.floor(utilization * ENDPOINT_SCALING.requestsServedAtOnce * 100) / 100;
}

/** What {@link capacityPlan} derives: the two mappings and the endpoint's admission. */
export interface CapacityPlan {
  /**
   * `MaximumConcurrency` of the intake mapping as deployed, and of the batch lane's. Real-time:
   * what the instances at the minimum admit; the capacity follower moves it with the instances in
   * service (`fleet-reading.ts`), up to {@link CapacityPlan.intakeAtMaximum}.
   */
  readonly intake: number;
  /** The intake's concurrency with every instance of the scaling maximum in service. */
  readonly intakeAtMaximum: number;
  readonly batch: number;
  /** Records per invocation (both mappings): one endpoint call each. */
  readonly batchSize: number;
  /** Requests an endpoint instance lets wait behind the one it runs (`DECIDE_QUEUE_SIZE`). */
  readonly queueSize: number;
  /** The endpoint's per-request deadline (`DECIDE_DEADLINE_MS`). */
  readonly deadlineMs: number;
}

/**
 * Sizes the decide function's mappings and the endpoint's admission together. The container
 * admits `concurrencyPerInstance` calls per instance (one runs, the others wait in its admission
 * queue), and a call holds so few items that every admitted item is served within the endpoint's
 * deadline at the measured seconds per item (with {@link SIZING_MARGIN}), whatever the number of
 * instances. The intake starts with the batches the instances at the minimum admit and follows
 * the instances in service from there (the capacity follower), so the pollers never outnumber
 * what runs; what an instance still cannot admit is refused at once (503 `queue_full`) and waits
 * in its queue with a backoff, counted as no failure. Serverless: every invocation has an instance
 * of its own, and the two mappings together stay within `MaxConcurrency`.
 */
export function capacityPlan(endpoint: EndpointProvisioning): CapacityPlan {
  const seconds = (endpoint.secondsPerItem ?? MEASURED_SECONDS_PER_ITEM.fresh) * SIZING_MARGIN;
  const deadlineMs = ENDPOINT_DEADLINE_MS;
  const itemsInDeadline = Math.floor(deadlineMs / 1000 / seconds);
  const batch = endpoint.batchMaxConcurrency ?? BATCH_LANE.maxConcurrency;
  const serverless = endpoint.mode === "serverless";
  const intake = serverless
    ? Math.max(LAMBDA_MIN_CONCURRENCY, endpoint.maxInstances - batch)
    : intakeConcurrencyFor(endpoint.minInstances);
  const intakeAtMaximum = serverless ? intake : intakeConcurrencyFor(endpoint.maxInstances);
  const admittedCalls = serverless ? 1 : DECIDE_FUNCTION.concurrencyPerInstance;
  const batchSize = Math.min(DECIDE_FUNCTION.batchSize, Math.floor(itemsInDeadline / admittedCalls));
  const where = `${endpoint.mode}, ${endpoint.minInstances} to ${endpoint.maxInstances} instances, batch lane ${batch}`;
  if (serverless && intake + batch > endpoint.maxInstances)
    throw new RangeError(
      `${where}: the intake and the batch lane need ${intake + batch} concurrent invocations (each at least ${LAMBDA_MIN_CONCURRENCY}), over the serverless MaxConcurrency ${endpoint.maxInstances}`,
    );
  if (batchSize < 1)
    throw new RangeError(
      `${where}: ${admittedCalls} calls of one item per instance cannot finish within the ${deadlineMs} ms deadline at ${seconds.toFixed(2)} s per item; the model is too slow for this instance type`,
    );
  // Every admitted call has at most one item waiting at a time (a batched call's items run one by one).
  return {
    intake,
    intakeAtMaximum,
    batch,
    batchSize,
    queueSize: Math.max(1, admittedCalls - 1),
    deadlineMs,
  };
}

/**
 * The decide function's two event source mappings' `MaximumConcurrency` and their batch size,
 * derived from how the endpoint is provisioned (the one place these numbers come from; the CDK
 * app, the local mode and the capacity model read it).
 */
export function decideConcurrency(
  endpoint: EndpointProvisioning,
): Pick<CapacityPlan, "intake" | "batch" | "batchSize"> {
  const { intake, batch, batchSize } = capacityPlan(endpoint);
  return { intake, batch, batchSize };
}

/** The endpoint container's admission (`DECIDE_QUEUE_SIZE`, `DECIDE_DEADLINE_MS`) for that provisioning. */
export function endpointAdmission(endpoint: EndpointProvisioning): { queueSize: number; deadlineMs: number } {
  const { queueSize, deadlineMs } = capacityPlan(endpoint);
  return { queueSize, deadlineMs };
}
