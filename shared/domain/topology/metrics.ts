/**
 * The custom metrics' part of the topology (`../topology.ts` re-exports it): what the functions
 * emit and the alarms read, named once.
 */

/**
 * The custom metrics: one namespace, and the `service` dimension each function emits them under
 * (CloudWatch dimensions are case-sensitive: the functions and the alarms both read these).
 */
export const METRICS = {
  namespace: "DecisionPipeline",
  service: {
    decide: "decide",
    reviewIntake: "review-intake",
    autoAction: "auto-action",
    reviewBacklog: "review-backlog",
    audit: "audit",
    batchFiles: "batch-files",
    capacityFollower: "capacity-follower",
  },
  /**
   * The capacity follower's figures, once a period: intake items (visible and in flight) per
   * instance asked for (scaling tracks it), instances in service (the scale-in guard reads it),
   * the wait a refused item can expect, the intake's concurrency, and 1 while a deployment's new
   * fleet bakes (the rollback alarms count a silent new fleet only then).
   */
  follower: {
    backlogPerInstance: "BacklogPerInstance",
    instancesInService: "InstancesInService",
    expectedWaitSeconds: "ExpectedWaitSeconds",
    intakeConcurrency: "IntakeConcurrency",
    deploymentBaking: "DeploymentBaking",
  },
  /** The review backlog's metrics and their dimension. */
  pendingReviews: "PendingReviews",
  oldestPendingReviewMinutes: "OldestPendingReviewMinutes",
  /**
   * The daily audit estimate's metrics, per policy: the rate, the budget verdict's bounds (the
   * over-budget alarm reads the lower one), whether the labels are too few to judge the budget
   * (1) or not (0), the share of automatic decisions the labels speak for, and the labels.
   */
  autoErrorRate: "AutoErrorRate",
  autoErrorUpperBound: "AutoErrorUpperBound",
  autoErrorLowerBound: "AutoErrorLowerBound",
  auditInconclusive: "AuditInconclusive",
  auditCoverage: "AuditCoverage",
  auditLabels: "AuditLabels",
  policyDimension: "policy",
  /**
   * The decide function's per-invocation maximum of the age (now minus SentTimestamp) of the items
   * it received, per lane. SQS's ApproximateAgeOfOldestMessage leaves out a message received three
   * times or more, which an item returned by the overload backoff soon is; the alarms and the
   * backlog step policy read the larger of the two.
   */
  oldestItemAgeSeconds: "oldest_item_age_seconds",
  /** The dimension that tells the decide function's queues apart, and its values. */
  laneDimension: "lane",
  lanes: { intake: "intake", batch: "batch" },
  /**
   * Items whose endpoint call failed for a reason other than overload (a 5xx other than the
   * busy answers, a model error, a timeout, an answer that breaks the contract): a broken
   * model or container, unlike SageMaker's Invocation5XXErrors, which counts the endpoint's
   * deliberate 503 queue_full answers as well.
   */
  endpointFailures: "endpoint_failures",
  /**
   * Events a target refused because they do not match the decision record they name (a forged or
   * altered "Decision Made"): counted by the auto-action and review intake functions, alarmed.
   */
  eventMismatch: "event_mismatch",
} as const;

/** A lane of the decide function: the queue an invocation's records came from. */
export type Lane = keyof typeof METRICS.lanes;
