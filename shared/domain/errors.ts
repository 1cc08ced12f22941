/**
 * Errors of the pipeline's adapters. Transient ones are retried (the SQS message comes back);
 * permanent ones are recorded and never retried.
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
