/**
 * Errors of the pipeline's adapters. Transient ones are retried (the SQS message comes back);
 * permanent ones are recorded and never retried. An overloaded endpoint is neither: the item is
 * fine and waits its turn in its queue, without counting as a failure.
 */

/** Base class: `transient` says whether retrying can help. */
export class PipelineError extends Error {
  override name = "PipelineError";
  constructor(
    message: string,
    readonly transient: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The decision endpoint failed in a way that may pass (throttling, 5xx, timeouts). */
export class EndpointUnavailableError extends PipelineError {
  override name = "EndpointUnavailableError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, true, options);
  }
}

/** Why the endpoint was too busy for an item. */
export const OVERLOAD_REASONS = [
  /** Its admission queue was full (503 `queue_full`). */
  "queue_full",
  /** SageMaker throttled the call (`ThrottlingException`, 429). */
  "throttled",
  /** The model is still loading, or a serverless instance still starting (503 `model_loading`, `ModelNotReadyException`). */
  "model_not_ready",
  /** The item waited past the endpoint's deadline behind others (504 `deadline_exceeded`). */
  "deadline_exceeded",
  /** The instance is shutting down (503 `shutting_down`), or SageMaker answered 503 itself. */
  "unavailable",
] as const;

/** Why the endpoint was too busy for an item. */
export type OverloadReason = (typeof OVERLOAD_REASONS)[number];

/**
 * The endpoint was too busy for the item (see {@link OVERLOAD_REASONS}): not a failure of the
 * item. It is not tried again at once, which would only add load; it goes back to its queue with
 * a growing visibility backoff and never counts toward its failure limit.
 */
export class EndpointOverloadedError extends PipelineError {
  override name = "EndpointOverloadedError";
  constructor(
    message: string,
    readonly reason: OverloadReason,
    options?: ErrorOptions,
  ) {
    super(message, true, options);
  }
}

/** The endpoint refused the item itself (4xx): retrying cannot help. */
export class EndpointRejectedError extends PipelineError {
  override name = "EndpointRejectedError";
  constructor(
    message: string,
    readonly status: number,
    options?: ErrorOptions,
  ) {
    super(message, false, options);
  }
}

/** Some events could not be published after retries. */
export class EventPublishError extends PipelineError {
  override name = "EventPublishError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, true, options);
  }
}

/** The event bus named does not exist: retrying cannot help. */
export class EventBusNotFoundError extends PipelineError {
  override name = "EventBusNotFoundError";
  constructor(
    readonly busName: string,
    options?: ErrorOptions,
  ) {
    super(`event bus "${busName}" does not exist`, false, options);
  }
}

/** The store could not be reached or throttled us. */
export class StoreUnavailableError extends PipelineError {
  override name = "StoreUnavailableError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, true, options);
  }
}

/** The store refused the record itself (a DynamoDB ValidationException): retrying cannot help. */
export class StoreRejectedError extends PipelineError {
  override name = "StoreRejectedError";
  constructor(message: string, options?: ErrorOptions) {
    super(message, false, options);
  }
}

/** What an event said, or what its record holds: the fields a target compares. */
export interface DecisionFacts {
  readonly eventId: string;
  readonly route: string;
  readonly chosen: string;
  readonly policyVersion: number;
}

/**
 * An event that does not match the record it names (a forged or altered "Decision Made", or a
 * replayed letter carrying another decision): never applied, never retried; the caller counts it,
 * logs both sides and alarms.
 */
export class EventRecordMismatchError extends PipelineError {
  override name = "EventRecordMismatchError";
  constructor(
    message: string,
    readonly itemId: string,
    readonly policyId: string,
    readonly event: DecisionFacts,
    readonly record: Partial<DecisionFacts> & { readonly status?: string },
  ) {
    super(message, false);
  }
}
