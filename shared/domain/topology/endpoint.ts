/**
 * The endpoint's part of the topology (`../topology.ts` re-exports it, so every number is still
 * read from the topology): how a real-time endpoint scales and how its updates are deployed.
 */

/**
 * Real-time endpoint auto scaling, on the work and once: nothing fires on the age of the oldest
 * item (an overload backoff inflates it and an alarm on it re-invokes its policy every minute).
 * Two target-tracking policies only add instances: one on SageMaker's `ConcurrentRequestsPerModel`
 * (requests running and queued in the container, per instance: the busy share of its one slot),
 * one on the intake's backlog per instance (visible and in-flight items ÷ instances asked for,
 * published by the capacity follower). One step policy removes them, and only while the
 * instances left would stay under the target (the work metric × n ÷ (n − 1) at or below
 * `scaleInShareOfTarget` of it): proportional scale-in rounds a low steady rate down to a count
 * that is then overloaded, and flaps.
 */
export const ENDPOINT_SCALING = {
  /** Requests one instance evaluates at once (llama.cpp on one sequence). */
  requestsServedAtOnce: 1,
  /** The busiest the target may make an instance, whatever the deadline allows. */
  maxUtilization: 0.7,
  /**
   * A scale-out on the work metric adds at most this share of the fleet: the metric is read no
   * higher than target × this. New instances take minutes to start; meanwhile the fleet drains
   * what waited and reads saturated, and an uncapped metric (2 calls per instance) asked for
   * 2.9 times the fleet on each evaluation. Bursts are the backlog policy's.
   */
  workStep: 1.3,
  /** Seconds of work per instance the backlog policy keeps the backlog under: about an instance's start. */
  backlogSeconds: 300,
  /** Scale-out cooldown: about the time a new instance takes to pass /ping. */
  scaleOutCooldownSeconds: 300,
  /** The scale-in guard: the work metric with one instance fewer, at or below this share of the target... */
  scaleInShareOfTarget: 0.9,
  /** ... for this many one-minute periods in a row ... */
  scaleInMinutes: 15,
  /** ... and no sooner than this after the last change. */
  scaleInCooldownSeconds: 300,
} as const;

/**
 * The scaling policies' metric math, written once: the CDK app builds the policies from it and
 * the capacity model recognizes it in a template. `work` is SageMaker's ConcurrentRequestsPerModel,
 * `instances` the capacity follower's instances in service.
 */
export const SCALING_MATH = {
  /** The work metric, read no higher than `cap`. */
  cappedWork: (cap: number) => `IF(work > ${cap}, ${cap}, work)`,
  /**
   * The work metric as it would read with one instance fewer; with one instance, or without the
   * follower's count, a value no threshold reaches (no scale-in). Idle: no work datapoint reads 0.
   */
  workWithOneFewer:
    "IF(FILL(instances, 0) > 1, FILL(work, 0) * FILL(instances, 0) / (FILL(instances, 0) - 1), 1000)",
} as const;

/**
 * Updates of a real-time endpoint: blue/green, a canary of half the new fleet first, then all the
 * traffic; the old fleet kept while the rollback alarms, which watch the new fleet's own metrics
 * (SageMaker publishes them with its EndpointConfigName), could still fire (their evaluation
 * window plus this margin), then removed.
 */
export const ENDPOINT_DEPLOYMENT = {
  bakingMarginSeconds: 120,
  /**
   * The shortest baking period: the alarm's window plus the time its metric takes to arrive
   * (the decide function's EMF lines reach CloudWatch in a minute or two) and to be evaluated.
   */
  minimumBakingSeconds: 900,
  /** The longest a deployment may take, new instances' start and both bakes included (SageMaker allows up to 8 h). */
  maximumExecutionSeconds: 3600,
  /** The longest a new instance may take to pass /ping (the variant's startup health check). */
  containerStartupSeconds: 600,
  /** The canary: this share of the new fleet's capacity takes its part of the traffic first (SageMaker's largest). */
  canaryCapacityPercent: 50,
  /** The new fleet refuses (5xx) more than this share of its calls... */
  refusedShare: 0.95,
  /** ... or answers this many times slower than the whole variant (old and new fleets together)... */
  slowerThanVariant: 1.25,
  /** ... or, while it bakes, the endpoint prober hears no reply for this many minutes (`prober.ts`): roll back. */
  silentMinutes: 5,
} as const;

/**
 * The rollback alarms' metric math, written once (the CDK app builds the alarms from it; the
 * capacity model's deployment simulation recognizes it). `calls` and `refused` are the new fleet's
 * Invocations and Invocation5XXErrors, `green` and `variant` its and the variant's ModelLatency,
 * `baking` the capacity follower's 1 while a deployment's new fleet bakes.
 */
export const GUARDRAIL_MATH = {
  refusedShare: "IF(FILL(calls, 0) > 0, FILL(refused, 0) / FILL(calls, 0), 0)",
  slowerThanVariant: "IF(FILL(variant, 0) > 0, FILL(green, 0) / FILL(variant, 0), 0)",
  /** Earlier releases' silent alarm, on the new fleet's own calls (the prober's replies now: `prober.ts`). */
  silentWhileBaking: "IF(FILL(baking, 0) > 0 AND FILL(calls, 0) - FILL(refused, 0) < 1, 1, 0)",
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
