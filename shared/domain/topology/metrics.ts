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
  },
  /** The review backlog's metrics and their dimension. */
  pendingReviews: "PendingReviews",
  oldestPendingReviewMinutes: "OldestPendingReviewMinutes",
  /** The daily audit estimate's metrics (rate, upper bound, labels), per policy. */
  autoErrorRate: "AutoErrorRate",
  autoErrorUpperBound: "AutoErrorUpperBound",
  auditLabels: "AuditLabels",
  policyDimension: "policy",
} as const;
