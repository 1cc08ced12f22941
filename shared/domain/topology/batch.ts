/**
 * The batch jobs' part of the topology (`../topology.ts` re-exports it, so every number is still
 * read from the topology): the batch lane, the batch files step and streamed writes.
 */

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
  /**
   * Refused lines intake holds before it checks its open group early: they are written in line
   * order, and a repeated id is known only once its group is checked.
   */
  refusedLinesHeld: 1_000,
  /** Batch files arrive under this prefix of the pipeline bucket. */
  incomingPrefix: "incoming/",
  /** Batch results and errors files go under this prefix. */
  filesPrefix: "batches/",
  /** The intake function: it streams the file, so memory does not grow with its size. */
  intakeMemoryMiB: 512,
  intakeTimeoutSeconds: 900,
  /**
   * How long intake holds a batch it reads (renewed every third of it while it reads): a batch
   * still "submitting" past its lease lost its reader (an interrupted local `batch submit`), and
   * the local mode reads it again.
   */
  intakeLeaseSeconds: 60,
} as const;

/**
 * The batch files step: its own function, started by a message on its queue when a batch
 * completes, which streams the members into the results and errors files (a multipart upload,
 * memory bounded by a page of members and one part). A later change (a label, a dead letter
 * decided after a replay) asks for a rewrite after `rewriteDelaySeconds`, so the files are
 * rewritten at most once per delay however many labels arrive; "Batch Reviewed" rewrites at once.
 */
export const BATCH_FILES = {
  memoryMiB: 512,
  /** Lambda's most: at DynamoDB Local's 2,600 members/s on 2 cores (docs/benchmarks.md), about two million members. */
  timeoutSeconds: 900,
  rewriteDelaySeconds: 300,
  /** Jobs per invocation: each job writes one batch's files. */
  batchSize: 1,
  /** Files written at once (the mapping's MaximumConcurrency, its smallest): a backlog of batches waits its turn. */
  maxConcurrency: 2,
} as const;

/** How long the step announcing a batch holds the right to: past the files function's timeout. */
export const BATCH_ANNOUNCE_LEASE_MS = (BATCH_FILES.timeoutSeconds + 60) * 1000;

/** Visibility timeout of the batch files queue: six times the function's timeout, as AWS advises. */
export const BATCH_FILES_VISIBILITY_SECONDS = BATCH_FILES.timeoutSeconds * 6;

/** Streamed writes to the object store: the size of one multipart part (S3's minimum is 5 MiB). */
export const OBJECT_PART_BYTES = 8 * 1024 * 1024;
