/**
 * What the capacity model knows of a deployed stack: the numbers that decide how much it can
 * take, read from the synthesized template (`template-reader.ts`) or written by hand in tests.
 * Times are in seconds throughout.
 */

/**
 * How SageMaker picks an instance for a request: RANDOM (its default), LEAST_OUTSTANDING_REQUESTS
 * as the model assumes it works (the less busy of a few instances drawn at random:
 * `AWS_BEHAVIOUR.sageMaker.leastOutstandingDraws`), or the least busy of all instances, which no
 * template can ask for: the best any router could do, for queueing checks and bounds.
 */
export type Routing = "random" | "least-outstanding" | "least-outstanding-exact";

/** The endpoint: real-time instances or a serverless endpoint. */
export interface EndpointShape {
  readonly mode: "realtime" | "serverless";
  /** Real-time instance type (serverless: undefined). */
  readonly instanceType: string | undefined;
  /** Instances at the start (real-time), or warm provisioned concurrency (serverless). */
  readonly initialInstances: number;
  /** Scaling minimum and maximum (equal to the initial count without a scalable target). */
  readonly minInstances: number;
  readonly maxInstances: number;
  /** Serverless: concurrent invocations and memory. */
  readonly serverless: { readonly maxConcurrency: number; readonly memoryMiB: number } | undefined;
  readonly routing: Routing;
  /** Requests the container lets wait behind the running one before it answers 503 queue_full. */
  readonly queueSize: number;
  /** The container's deadline, waiting included... */
  readonly deadlineSeconds: number;
  /** ...counted per call from its arrival, or (older containers) per item from when it starts waiting. */
  readonly deadlineScope: "call" | "item";
}

/** A metric the scaling policies or their alarms watch. */
export type ScalingMetric =
  /** InvokeEndpoint calls per in-service instance per minute (SageMakerVariantInvocationsPerInstance). */
  | "invocationsPerInstance"
  /** In-flight requests, running and queued, per instance (ConcurrentRequestsPerModel[HighResolution]). */
  | "concurrentRequestsPerModel"
  /**
   * The same, as it would read with one instance fewer: × instances ÷ (instances − 1), with the
   * instances the capacity follower publishes (a scale-in guard; one instance: no fewer).
   */
  | "concurrentRequestsWithOneFewer"
  /** Age of the oldest message of the intake queue (AWS/SQS ApproximateAgeOfOldestMessage). */
  | "oldestMessageAge"
  /** Visible messages of the intake queue (AWS/SQS ApproximateNumberOfMessagesVisible). */
  | "visibleMessages"
  /**
   * Intake items waiting (visible and in flight) per instance scaling has asked for, as the
   * capacity follower publishes it once a period (`shared/domain/fleet-reading.ts`).
   */
  | "backlogPerInstance";

/** A target-tracking policy. */
export interface TargetTrackingShape {
  readonly kind: "target";
  readonly name: string;
  readonly metric: ScalingMetric;
  readonly target: number;
  /** The metric is read no higher than this (metric math `IF(m > cap, cap, m)`). @default none */
  readonly cap?: number;
  /** Seconds per datapoint: 60, or 10 for a high-resolution metric. */
  readonly periodSeconds: number;
  readonly scaleOutCooldown: number;
  readonly scaleInCooldown: number;
  readonly disableScaleIn: boolean;
}

/** One step of a step policy, bounds relative to the alarm threshold. */
export interface StepShape {
  readonly lower: number | undefined;
  readonly upper: number | undefined;
  readonly adjustment: number;
}

/** A CloudWatch alarm that drives a step policy. */
export interface AlarmShape {
  readonly metric: ScalingMetric;
  readonly threshold: number;
  readonly comparison: "above" | "atOrAbove" | "below" | "atOrBelow";
  readonly periodSeconds: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
}

/** A step-scaling policy and the alarm that invokes it. */
export interface StepPolicyShape {
  readonly kind: "step";
  readonly name: string;
  readonly alarm: AlarmShape;
  readonly adjustmentType: "ChangeInCapacity" | "PercentChangeInCapacity" | "ExactCapacity";
  readonly steps: readonly StepShape[];
  readonly cooldown: number;
}

/** A scaling policy of the endpoint's variant. */
export type PolicyShape = TargetTrackingShape | StepPolicyShape;

/** One of the decide function's event source mappings and its queue. */
export interface LaneShape {
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  /** ScalingConfig.MaximumConcurrency (undefined: only Lambda's own limits apply). */
  readonly maxConcurrency: number | undefined;
  readonly visibilityTimeoutSeconds: number;
  /** Receives before the dead-letter queue (undefined: no redrive, never dead-lettered). */
  readonly maxReceiveCount: number | undefined;
}

/** The decide function. */
export interface FunctionShape {
  readonly timeoutSeconds: number;
  readonly memoryMiB: number;
  readonly reservedConcurrency: number | undefined;
  /** Per-call timeout and tries of its endpoint client. */
  readonly endpointTimeoutSeconds: number;
  readonly endpointAttempts: number;
  /** Items per InvokeEndpoint call (1: each item alone). */
  readonly endpointBatchItems: number;
}

/**
 * How the decide function treats an endpoint too busy for an item (503 queue_full, 504
 * deadline_exceeded, a throttle): not tried again within the run, the item goes back to its queue
 * with a visibility backoff that grows with its receive count, and only the item's own failures
 * count toward dead-lettering it. Absent: overload is retried like any failure and every receive
 * counts (SQS's maxReceiveCount alone).
 */
export interface OverloadShape {
  /**
   * Seconds until the message is visible again after its `receiveCount`-th receive; `draw` is
   * uniform in [0, 1); `expectedWaitSeconds` is the capacity follower's latest, when it runs.
   */
  readonly backoffSeconds: (receiveCount: number, draw: number, expectedWaitSeconds?: number) => number;
  /** Item failures (not overload) after which the function dead-letters the item itself. */
  readonly maxItemFailures: number | undefined;
}

/**
 * The capacity follower: a scheduled function that, every `periodSeconds`, sets the intake
 * mapping's MaximumConcurrency to `concurrencyPerInstance` × the instances in service (within 2 to
 * `maxConcurrency`), publishes the backlog per instance scaling tracks, and records the expected
 * wait (backlog × `secondsPerItem` ÷ instances) the decide function's overload backoff starts from.
 */
export interface FollowerShape {
  readonly periodSeconds: number;
  readonly concurrencyPerInstance: number;
  readonly maxConcurrency: number;
  /** Seconds per item the deployed code assumes. */
  readonly secondsPerItem: number;
}

/** The pipeline as the capacity model sees it. */
export interface PipelineShape {
  readonly endpoint: EndpointShape;
  readonly policies: readonly PolicyShape[];
  readonly intake: LaneShape;
  /** The batch lane (idle in the model; its concurrency shares the account's). */
  readonly batch: LaneShape | undefined;
  readonly decide: FunctionShape;
  readonly overload: OverloadShape | undefined;
  /** The capacity follower, when the stack has one (undefined: the mapping's concurrency is fixed). */
  readonly follower?: FollowerShape | undefined;
}
