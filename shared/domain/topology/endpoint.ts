/**
 * The endpoint's part of the topology (`../topology.ts` re-exports it, so every number is still
 * read from the topology): how a real-time endpoint scales and how its updates are deployed.
 */

/**
 * Real-time endpoint auto scaling. Target tracking follows SageMaker's high-resolution
 * `ConcurrentRequestsPerModel` (requests in the container, queued ones included, every 10 s):
 * one model evaluates one request (a batch of up to `endpointBatchItems` items) at a time, so the
 * metric is the busy share of an instance's one slot. A step policy on the intake queue's oldest
 * message is the safety net for a backlog the concurrency does not show (a capped event source).
 */
export const ENDPOINT_SCALING = {
  /** Requests one instance evaluates at once (llama.cpp on one sequence). */
  requestsServedAtOnce: 1,
  /** The busiest the target may make an instance, whatever the deadline allows. */
  maxUtilization: 0.7,
  /** Add capacity quickly (a new instance takes minutes to pass /ping) ... */
  scaleOutCooldownSeconds: 60,
  /** ... and remove it slowly (SageMaker advises 300 s or more). */
  scaleInCooldownSeconds: 300,
  /** Oldest intake message age (s) that adds one instance, and the age that adds two. */
  backlogStepSeconds: { addOne: 120, addTwo: 600 },
  /** The step policy's evaluation: one-minute maximum of the age ... */
  backlogPeriodSeconds: 60,
  /** ... held while any of the last 5 minutes was over a step (an item in backoff is seen only when received again). */
  backlogLookbackPeriods: 5,
} as const;

/**
 * Updates of a real-time endpoint: blue/green, all traffic at once, the old fleet kept while the
 * endpoint's error alarm could still fire (its evaluation window plus this margin), then removed.
 */
export const ENDPOINT_DEPLOYMENT = {
  bakingMarginSeconds: 120,
  /**
   * The shortest baking period: the alarm's window plus the time its metric takes to arrive
   * (the decide function's EMF lines reach CloudWatch in a minute or two) and to be evaluated.
   */
  minimumBakingSeconds: 900,
  /** The longest a deployment may take, new instances' start included (SageMaker allows up to 8 h). */
  maximumExecutionSeconds: 3600,
  /** The longest a new instance may take to pass /ping (the variant's startup health check). */
  containerStartupSeconds: 600,
} as const;

/**
 * Seconds a blue/green deployment bakes the new fleet beside the old: the rollback alarm's
 * evaluation window plus a margin, and never under the minimum.
 */
export const bakingSecondsFor = (alarmWindowSeconds: number): number =>
  Math.min(
    3600,
    Math.max(
      ENDPOINT_DEPLOYMENT.minimumBakingSeconds,
      alarmWindowSeconds + ENDPOINT_DEPLOYMENT.bakingMarginSeconds,
    ),
  );

/**
 * The capacity follower (`functions/follow-capacity.ts`): every `periodSeconds` it reads the
 * endpoint's instance counts and the intake's depth, sets the intake mapping's concurrency to what
 * the instances in service admit, publishes the backlog per instance that scaling tracks, and
 * records the expected wait the decide function's overload backoff starts from. A reading older
 * than `staleAfterSeconds` is not used (the follower has stopped; the fixed schedule applies).
 */
export const CAPACITY_FOLLOWER = {
  periodSeconds: 60,
  staleAfterSeconds: 300,
  /**
   * Intake batches per instance in service. An instance admits two calls (one runs, one waits),
   * but least-outstanding routing compares a few instances, not all: with as many batches as
   * admission slots, a saturated fleet has one free slot at a time, and the capacity model
   * refused up to 80% of calls in a minute of a 10x burst; at three quarters of the slots, up
   * to 40%, with the same throughput.
   */
  concurrencyPerInstance: 1.5,
  /** The most concurrent batches one SQS mapping takes. */
  maxMappingConcurrency: 1000,
} as const;
