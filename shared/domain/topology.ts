/**
 * The pipeline's topology, defined once: queue and redrive settings, the event rules and their
 * patterns, and function settings. The CDK app deploys it and the local stand-ins mirror it, so
 * the two cannot drift apart.
 */

import measured from "./topology/measured-times.json" with { type: "json" };

// The batch jobs', the endpoint's, the live checks' and the custom metrics' numbers, the event
// rules and the decisions table's access and indexes have files of their own; they are part of the
// topology all the same.
export * from "./topology/async.ts";
export * from "./topology/batch.ts";
export * from "./topology/endpoint.ts";
export * from "./topology/isolation.ts";
export * from "./topology/live-checks.ts";
export * from "./topology/metrics.ts";
export * from "./topology/rules.ts";
export * from "./topology/table.ts";

/** Receives before a message of a target's queue (auto action, review, rejected) goes to its dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/**
 * The decide function's queues (intake, batch lane). SQS counts every receive toward
 * `maxReceiveCount`, an overload return included, so it cannot tell a busy endpoint from a
 * failing item: the decide function counts the item's own failures and dead-letters it itself
 * after `maxItemFailures`; an item the endpoint was too busy for goes back with a growing
 * visibility backoff and counts as no failure. SQS's limit is a backstop for a handler that never
 * reports (a crash every time: 1,000 receives × the 12-minute visibility, about 8 days), which
 * overload alone reaches only after days; both stay within the 14 days of retention.
 */
export const DECIDE_QUEUES = {
  maxItemFailures: 5,
  /** SQS's own receive limit (its maximum), the backstop. */
  maxReceiveCount: 1000,
  retentionDays: 14,
  /**
   * An overloaded item's visibility: the wait the fleet lets it expect (the capacity follower's
   * reading: backlog × seconds per item ÷ instances, at least `shortestFirstSeconds`), or
   * `firstSeconds` without a recent reading, doubled per receive up to `maxSeconds` (it comes back
   * soon after an overload ends), drawn between half and all of it to spread returns.
   */
  overloadBackoff: { firstSeconds: 30, maxSeconds: 900, shortestFirstSeconds: 2 },
} as const;

/** The decide function's settings (the queue's visibility timeout is six times its timeout, as AWS advises). */
export const DECIDE_FUNCTION = {
  memoryMiB: 512,
  /** Above the longest an item can take (endpointAttempts × endpointTimeoutMs plus backoff). */
  timeoutSeconds: 120,
  /** Most records per invocation; `decideConcurrency` (`capacity-plan.ts`) picks the batch size at or below it. */
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  /** Concurrent intake batches per endpoint instance at the scaling maximum (one waits while one runs). */
  concurrencyPerInstance: 2,
  /**
   * Per call, under SageMaker's 60 s per invocation with room for its own overhead; 2 tries and
   * backoff take at most about 100 s, under the 120 s timeout. An overloaded endpoint is not
   * tried again: the item goes back to its queue instead.
   */
  endpointTimeoutMs: 50_000,
  endpointAttempts: 2,
  /** First backoff between tries; doubles each try, with full jitter. */
  endpointBaseDelayMs: 100,
  /**
   * Most items per InvokeEndpoint call: the records of one SQS batch go in one call (bodies split
   * at 3.5 MB, limit 6 MB); `decideConcurrency` (`capacity-plan.ts`) sizes the batch so they fit the deadline.
   */
  endpointBatchItems: 10,
  /** How long the first item of a batch waits for the others (each does a table read first). */
  endpointBatchWindowMs: 20,
  /** Largest request body per batched call (SageMaker real-time takes 6 MB, serverless 4 MB). */
  endpointBatchBodyBytes: 3.5 * 1024 * 1024,
  publishLeaseMs: 60_000,
} as const;

/** How the endpoint clients call the endpoint (the decide function's settings, in the clients' words). */
export const ENDPOINT_CALLS = {
  timeoutMs: DECIDE_FUNCTION.endpointTimeoutMs,
  attempts: DECIDE_FUNCTION.endpointAttempts,
  baseDelayMs: DECIDE_FUNCTION.endpointBaseDelayMs,
} as const;

/** How the batching endpoint client groups items into one call. */
export const ENDPOINT_BATCHING = {
  maxItems: DECIDE_FUNCTION.endpointBatchItems,
  windowMs: DECIDE_FUNCTION.endpointBatchWindowMs,
  maxBodyBytes: DECIDE_FUNCTION.endpointBatchBodyBytes,
} as const;

/**
 * `decide calibrate` against a deployed or HTTP endpoint: two more tries than the decide
 * function, because a row that fails there is lost from the fit rather than redelivered.
 */
export const CALIBRATION_ENDPOINT_CALLS = { ...ENDPOINT_CALLS, attempts: 5 } as const;

/** Publishing to EventBridge: tries per entry (only failed entries are sent again) and the first backoff. */
export const EVENT_PUBLISHING = { attempts: 4, baseDelayMs: 50 } as const;

/**
 * The decide function's endpoint calls against a serverless endpoint: a cold start (image pull
 * and model load, up to the 3-minute /ping limit) can hold the first call until SageMaker's 60 s
 * invocation limit, so each try may take 55 s, and two tries plus backoff stay under the
 * function timeout; an item whose tries all fail comes back after the visibility timeout, by
 * which time the endpoint is warm.
 */
export const SERVERLESS_DECIDE = { endpointTimeoutMs: 55_000, endpointAttempts: 2 } as const;

/**
 * The target functions fed by a queue (auto-action, review intake): their settings. Their
 * mappings' `maxConcurrency` keeps a replay or a surge of auto actions from taking the account's
 * concurrency (an SQS mapping without one grows to 1,000 concurrent batches, the default
 * account quota), which the sign-in, authorizer and review functions need.
 */
export const TARGET_FUNCTION = {
  memoryMiB: 256,
  timeoutSeconds: 30,
  batchSize: 10,
  maxConcurrency: 10,
} as const;

/** Visibility timeout of a target function's queue: six times its timeout, as AWS advises. */
export const TARGET_VISIBILITY_SECONDS = TARGET_FUNCTION.timeoutSeconds * 6;

/**
 * The endpoint's own per-request deadline (waiting in its admission queue included; one deadline
 * for all items of a batched call): below the decide function's per-call timeout, so the server
 * gives up on a request before its client does and never evaluates one nobody waits for.
 */
export const ENDPOINT_DEADLINE_MS = DECIDE_FUNCTION.endpointTimeoutMs - 2_000;

/** How often the local mode, restarted, tries again an event whose publish lease the last run held. */
export const LOCAL_OUTBOX_RETRY_MS = 2_000;

/** Visibility timeout of the intake queue. */
export const INTAKE_VISIBILITY_SECONDS = DECIDE_FUNCTION.timeoutSeconds * 6;

/**
 * What the on-call alarms call unhealthy (`infra/constructs/operations/health-alarms.ts`): how long the
 * oldest message of each consumed queue may wait (the batch lane waits by design: its
 * concurrency is capped), the share of its timeout the decide function's longest run may take,
 * the endpoint's busy CPU (a share of all its vCPUs) and memory, and how long a level must last.
 */
export const ON_CALL_ALARMS = {
  // The batch files step's requests wait at most a rewrite delay, and a job at most its timeout.
  oldestMessageMinutes: { intake: 15, batch: 360, batchFiles: 60, autoAction: 15, review: 15 },
  /**
   * Intake items in flight (received, or hidden by an overload backoff) that page on-call: a
   * tenth of what SQS holds in flight per queue, far above what the pollers hold (1.5 batches of
   * up to 10 per instance) while the intake drains.
   */
  intakeInFlight: 12_000,
  decideDurationShare: 0.8,
  /** p90 time of one endpoint call, as a share of the deadline every admitted item must meet. */
  modelLatencyShareOfDeadline: 0.8,
  endpointCpuShare: 0.95,
  endpointMemoryPercent: 85,
  /** Minutes CPU or the instance count must stay at its level before the alarm fires. */
  sustainedMinutes: 15,
  /**
   * The endpoint-errors (rollback) alarm: failed items in 2 of the last 5 minutes. One-minute
   * periods, so that it can fire well inside a deployment's baking period; 2 of 5, so that one
   * failed call does not roll a deployment back or page anyone.
   */
  endpointFailures: { periodSeconds: 60, evaluationPeriods: 5, datapointsToAlarm: 2 },
  /**
   * Five-minute periods an oldest-age alarm looks back over: any one above the threshold holds it.
   * An item waiting out the overload backoff (up to 15 min) is measured by the decide function
   * only when it is received again, so the age it reports comes and goes between periods.
   */
  oldestAgeLookbackPeriods: 3,
} as const;

/** Human review: how long opening an item claims it, and how long a reviewer may change their own label. */
export const REVIEW = {
  claimMs: 5 * 60_000,
  changeWindowMs: 10 * 60_000,
  /**
   * Deployed sign-in: the ID and access tokens live this long (a revoked or removed reviewer is
   * out within it); the refresh token, in an HttpOnly cookie only the sign-in routes see, renews
   * them for the session's hours (an open page renews before expiry; sign-out revokes it).
   */
  tokenMinutes: 15,
  sessionHours: 8,
  /** Requests per second (and burst) the review API takes: its data routes, and the sign-in routes apart. */
  apiThrottle: { rate: 20, burst: 50 },
  authThrottle: { rate: 5, burst: 20 },
  /** Items per page of the review queue. */
  pageSize: 25,
  /** Pending-review age (minutes) at which a policy's alarm fires, unless the policy sets its own. */
  defaultServiceLevelMinutes: 240,
  /** The queue page counts waiting items up to this many, then says "1,000 or more". */
  queueCountCap: 1_000,
  /** The backlog job counts each policy's waiting items up to this many (its metric saturates there). */
  backlogCountCap: 100_000,
} as const;

/** The decisions view (`/decisions`): rows per page. */
export const DECISIONS_VIEW = { pageSize: 50 } as const;

/**
 * The scheduled drift check: it looks at a sample of each policy's recent decisions, at most
 * `sampleSize`, spread over `slices` equal parts of the period, so its reads never grow with the
 * traffic.
 */
export const DRIFT = { periodHours: 24, minimumDecisions: 50, sampleSize: 2_000, slices: 48 } as const;

/** The scheduled recalibration: labels needed before a proposal, and where proposals go. */
export const RECALIBRATION = {
  /** The floor rule: under 200 labels a proposal still keeps a fifth of items with people. */
  minLabels: 200,
  /** Key prefix of proposals in the pipeline bucket. */
  prefix: "calibration/",
} as const;

/** The pipeline bucket's lifecycle. */
export const BUCKET = {
  /** Days a replaced or deleted object's old version is kept. */
  noncurrentVersionDays: 30,
  /** Days server access logs are kept. */
  accessLogDays: 90,
} as const;

/** Seconds per decision on the reference instance, fresh and under a cached preamble (`npm run bench:cost`). */
export const MEASURED_SECONDS_PER_ITEM = {
  instanceType: measured.referenceInstance,
  ...measured.secondsPerItem,
};

/** Headroom on the measured time per item (machines of one type differ; a model may be larger). */
export const SIZING_MARGIN = 1.5;

/** The smallest `MaximumConcurrency` an event source mapping takes. */
export const LAMBDA_MIN_CONCURRENCY = 2;
