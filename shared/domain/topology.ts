/**
 * The pipeline's topology, defined once: queue and redrive settings, the event rules and their
 * patterns, and function settings. The CDK app deploys it and the local stand-ins mirror it, so
 * the two cannot drift apart.
 */

import type { EventPattern } from "./event-pattern.ts";
import { EVENT_SOURCE } from "./events.ts";

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

/** Receives before a message goes to the dead-letter queue. */
export const MAX_RECEIVE_COUNT = 5;

/** The decide function's settings (the queue's visibility timeout is six times its timeout, as AWS advises). */
export const DECIDE_FUNCTION = {
  memoryMiB: 512,
  /** Above the longest an item can take (endpointAttempts × endpointTimeoutMs plus backoff). */
  timeoutSeconds: 120,
  batchSize: 10,
  maxBatchingWindowSeconds: 1,
  /** Concurrent batches per endpoint instance: one model evaluates one request at a time. */
  concurrencyPerInstance: 2,
  /** Per call; with 3 tries and backoff an item takes at most about 76 s, under the 120 s timeout. */
  endpointTimeoutMs: 25_000,
  endpointAttempts: 3,
  /**
   * Items per InvokeEndpoint call (one SQS batch): 10 fresh 200-token decisions take about 16 s
   * on ml.c6i.xlarge for the 0.5B model (1.6 s each, docs/benchmarks.md), under the 25 s try
   * with 1.5x margin and far under SageMaker's 60 s; bodies are split at 3.5 MB (limit 6 MB).
   */
  endpointBatchItems: 10,
  /** How long the first item of a batch waits for the others (each does a table read first). */
  endpointBatchWindowMs: 20,
  publishLeaseMs: 60_000,
} as const;

/**
 * The decide function's endpoint calls against a serverless endpoint: a cold start (image pull
 * and model load, up to the 3-minute /ping limit) can hold the first call until SageMaker's 60 s
 * invocation limit, so each try may take 55 s, and two tries plus backoff stay under the
 * function timeout; an item whose tries all fail comes back after the visibility timeout, by
 * which time the endpoint is warm.
 */
export const SERVERLESS_DECIDE = { endpointTimeoutMs: 55_000, endpointAttempts: 2 } as const;

/** The target functions fed by a queue (auto-action, review intake): their settings. */
export const TARGET_FUNCTION = { memoryMiB: 256, timeoutSeconds: 30, batchSize: 10 } as const;

/** Visibility timeout of a target function's queue: six times its timeout, as AWS advises. */
export const TARGET_VISIBILITY_SECONDS = TARGET_FUNCTION.timeoutSeconds * 6;

/**
 * The endpoint's own per-request deadline (waiting included): below the decide function's
 * per-call timeout, so the server gives up on a request before its client does and never
 * evaluates one nobody waits for.
 */
export const ENDPOINT_DEADLINE_MS = DECIDE_FUNCTION.endpointTimeoutMs - 2_000;

/** Visibility timeout of the intake queue. */
export const INTAKE_VISIBILITY_SECONDS = DECIDE_FUNCTION.timeoutSeconds * 6;

/** Event rules: name, pattern and what they deliver to. */
export const RULES = {
  auto: {
    description:
      "Confident, automatable decisions go to the auto-action queue, which the auto-action function consumes",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Made"], detail: { route: ["auto"] } },
  },
  human: {
    description: "Escalated decisions go to the review queue, which the review intake function consumes",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Made"], detail: { route: ["human"] } },
  },
  rejected: {
    description: "Rejected items go to a queue for inspection",
    pattern: { source: [EVENT_SOURCE], "detail-type": ["Decision Rejected"] },
  },
  requested: {
    description: "Upstream 'Decision Requested' events feed the intake queue (the item is the detail)",
    pattern: { "detail-type": ["Decision Requested"], source: [{ "anything-but": [EVENT_SOURCE] }] },
  },
} as const satisfies Record<string, { description: string; pattern: EventPattern }>;

/** Name of a rule. */
export type RuleName = keyof typeof RULES;

/** DynamoDB actions on the decisions table. */
export type TableAction = "GetItem" | "PutItem" | "UpdateItem" | "Query";

/**
 * What each function may do to the decisions table: the least its code needs (never DeleteItem,
 * BatchWriteItem or Scan). The CDK app grants exactly these; `test/infra` checks the grants
 * against the template and against the SDK commands each function's bundle references.
 */
export const TABLE_ACCESS = {
  /** get, latest (Query), create (PutItem), lease and outbox (UpdateItem), failure notes (PutItem). */
  Decide: ["GetItem", "PutItem", "UpdateItem", "Query"],
  /** get, the conditional transition. */
  AutoAction: ["GetItem", "UpdateItem"],
  /** get, the set-once ledger. */
  ReviewIntake: ["GetItem", "UpdateItem"],
  /** the queue (Query on the status index), get, the conditional transition. */
  Review: ["GetItem", "UpdateItem", "Query"],
  ReviewPage: ["GetItem", "UpdateItem", "Query"],
  /** failure notes. */
  Replay: ["GetItem"],
  /** recent decisions (Query on the status index). */
  Drift: ["Query"],
  /** the pending items (Query on the status index). */
  ReviewBacklog: ["Query"],
  /** reviewed decisions (Query on the status index). */
  Recalibrate: ["Query"],
  /** audit samples, pending and reviewed (Query on the status index). */
  Audit: ["Query"],
  /** the batch (PutItem, UpdateItem, GetItem) and its members when it completes at once (Query). */
  BatchIntake: ["GetItem", "PutItem", "UpdateItem", "Query"],
} as const satisfies Record<string, readonly TableAction[]>;

/** Human review: how long opening an item claims it, and how long a reviewer may change their own label. */
export const REVIEW = {
  claimMs: 5 * 60_000,
  changeWindowMs: 10 * 60_000,
  /** Items per page of the review queue. */
  pageSize: 25,
  /** Pending-review age (minutes) at which a policy's alarm fires, unless the policy sets its own. */
  defaultServiceLevelMinutes: 240,
} as const;

/** The scheduled recalibration: labels needed before a proposal, and where proposals go. */
export const RECALIBRATION = {
  /** The floor rule: under 200 labels a proposal still keeps a fifth of items with people. */
  minLabels: 200,
  /** Key prefix of proposals in the pipeline bucket. */
  prefix: "calibration/",
} as const;

/**
 * Live audits: the days of decisions the daily estimate reads, the confidence of its interval,
 * and the labels per audit band below which the estimate warns that the band is thinly audited.
 */
export const AUDIT = { windowDays: 30, confidence: 0.95, minLabelsPerBand: 10 } as const;

/** `decide what-if`: the items it re-scores unless told otherwise. */
export const WHAT_IF = { sample: 500, windowDays: 30 } as const;

/** The pipeline bucket's lifecycle. */
export const BUCKET = {
  /** Days a replaced or deleted object's old version is kept. */
  noncurrentVersionDays: 30,
  /** Days server access logs are kept. */
  accessLogDays: 90,
} as const;

/**
 * The batch lane: batch items have their own queue and event source mapping whose maximum
 * concurrency is a share of the decide function's, so a large batch uses spare endpoint capacity
 * and live items keep theirs.
 */
export const BATCH_LANE = {
  /** Concurrent batch invocations (Lambda's minimum for a maximum concurrency is 2). @default 2 */
  maxConcurrency: 2,
  /** Lines per SendMessageBatch at intake. */
  sendBatch: 10,
  /** Batch files arrive under this prefix of the pipeline bucket. */
  incomingPrefix: "incoming/",
  /** Batch results and errors files go under this prefix. */
  filesPrefix: "batches/",
  /** The intake function: it streams the file, so memory does not grow with its size. */
  intakeMemoryMiB: 512,
  intakeTimeoutSeconds: 900,
} as const;

/** How the deployed endpoint is provisioned: what the capacity numbers below are derived from. */
export interface EndpointProvisioning {
  readonly mode: "realtime" | "serverless";
  /** Instances at the scaling minimum (real-time). */
  readonly minInstances: number;
  /** Instances at the scaling maximum (real-time), or the serverless MaxConcurrency. */
  readonly maxInstances: number;
  /** Concurrent batch-lane invocations asked for at deploy. @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
}

/**
 * The decide function's two event source mappings' `MaximumConcurrency`, derived from how the
 * endpoint is provisioned (the one place these numbers come from; the CDK app and the capacity
 * model read it).
 */
export function decideConcurrency(endpoint: EndpointProvisioning): { intake: number; batch: number } {
  return {
    intake: Math.max(2, endpoint.maxInstances * DECIDE_FUNCTION.concurrencyPerInstance),
    batch: endpoint.batchMaxConcurrency ?? BATCH_LANE.maxConcurrency,
  };
}
