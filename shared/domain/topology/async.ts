/**
 * The asynchronous lane's part of the topology (`../topology.ts` re-exports it): SageMaker
 * Asynchronous Inference for the batch lane (and the live lane with `-c endpointMode=async`).
 * A submit step groups queued items of one policy into JSONL objects in the pipeline bucket and
 * calls InvokeEndpointAsync; SageMaker queues the objects, scales its instances on the backlog
 * (to zero when there is none), writes each answer file to S3 and notifies through SNS; a result
 * function, fed by those notifications through SQS, decides every item on the decide path.
 */

/** The async endpoint, its scaling, and the lane's objects. */
export const ASYNC_LANE = {
  /** Longest one object may run on the endpoint (SageMaker allows up to 3,600 s). */
  invocationTimeoutSeconds: 3600,
  /**
   * Share of that timeout an object is sized to fill at the measured seconds per item with the
   * sizing margin: an object finishes well within its timeout on an instance as slow as measured.
   */
  objectShareOfTimeout: 0.25,
  /** Most items in one object: the most records an SQS event source hands one invocation. */
  maxItemsPerObject: 10_000,
  /** How long a request may wait in SageMaker's queue before it expires (SageMaker's most: 6 h). */
  requestTtlSeconds: 21_600,
  /** Objects one instance runs at once: one model evaluates one request at a time. */
  concurrentInvocationsPerInstance: 1,
  /** Target tracking's value of `ApproximateBacklogSizePerInstance`: objects per instance. */
  backlogPerInstanceTarget: 2,
  /** Add instances quickly ... */
  scaleOutCooldownSeconds: 60,
  /** ... and remove them after a quiet spell (to zero once nothing is queued). */
  scaleInCooldownSeconds: 600,
  /**
   * The wake-up: an alarm on `HasBacklogWithoutCapacity` (one-minute periods) adds one instance
   * from zero, since target tracking alone waits until the backlog passes its target. Its alarm
   * repeats the step every minute while no instance serves, so the cooldown outlasts the slowest
   * start expected (the `wakeUpMinutes` alarm's 20 minutes): with a 300 s cooldown a 600 s start
   * launched 2 instances for one item, and a 900 s start never served (the capacity model).
   */
  wakeUp: { periodSeconds: 60, evaluationPeriods: 2, cooldownSeconds: 1200 },
  /** Instances at most. @default 4 */
  defaultMaxInstances: 4,
  /** Tries of a whole object whose invocation failed, before its items are dead-lettered. */
  objectAttempts: 3,
  /** Keys under the pipeline bucket: requests (the endpoint reads), items (only the lane reads), answers. */
  prefixes: {
    /** Everything of the lane (a lifecycle rule expires it after the queues' retention). */
    root: "async/",
    input: "async/input/",
    items: "async/items/",
    output: "async/output/",
    results: "async/output/results/",
    failures: "async/output/failures/",
  },
  /** The content type of an object: one System One request per line; answers alike, one per line. */
  contentType: "application/jsonlines",
  /** The submit function, on the queue(s) of the lane(s) it serves. */
  submit: {
    memoryMiB: 512,
    timeoutSeconds: 300,
    /** How long its event source gathers records into one invocation (one object per policy). */
    maxBatchingWindowSeconds: 30,
    /** Concurrent invocations: objects go to SageMaker's own queue, so few suffice. */
    maxConcurrency: 2,
  },
  /**
   * The result function, on the notifications' queue: one notification (one object) per
   * invocation. Its timeout sets the queue's visibility (six times it): a full object settles in
   * about 2.5 s of table work (406 items, 8 at once, 0.05 s each) plus a cascade's second round,
   * so 180 s leaves room, and one failed try delays an object 18 minutes, not 90.
   */
  results: {
    memoryMiB: 1024,
    timeoutSeconds: 180,
    /** Items of one object decided at once (each a few table writes and an event). */
    itemConcurrency: 8,
    maxConcurrency: 10,
  },
  /** Alarms: oldest queued object, a wake-up that did not happen, failed invocations. */
  alarms: {
    oldestRequestMinutes: 120,
    /**
     * An open live object (`-c endpointMode=async`) older than this: a wake-up from zero (2
     * minutes of alarm, a start of 5 to 10) and one object's run (about 2 minutes) take 15 at most.
     */
    intakeOpenObjectMinutes: 30,
    /** Minutes a backlog may stand without an instance: an instance start takes up to 10 minutes. */
    wakeUpMinutes: 20,
    failedInvocationsPeriodSeconds: 300,
  },
} as const;

/** The async lane's functions' metrics: their `service` dimension (in the `DecisionPipeline` namespace). */
export const ASYNC_METRICS = {
  service: { submit: "async-submit", results: "async-results" },
  /**
   * Seconds since the oldest open object (handed to SageMaker, not yet settled or dead-lettered)
   * was submitted, by lane (`lane`: batch, intake): published as a Maximum by the submit or
   * result function (an alarm watches it past the hold-back's budget, and the intake's in minutes).
   */
  oldestOpenObjectAgeSeconds: "AsyncOldestOpenObjectAgeSeconds",
} as const;

/** The lanes that can run on the async endpoint: the batch lane, and the live intake too with `-c endpointMode=async`. */
export const ASYNC_SOURCES = ["batch", "intake"] as const;

/** A lane the async endpoint serves. */
export type AsyncSource = (typeof ASYNC_SOURCES)[number];

/** The visibility timeout of the notifications' queue: six times the result function's timeout. */
export const ASYNC_RESULTS_VISIBILITY_SECONDS = ASYNC_LANE.results.timeoutSeconds * 6;
