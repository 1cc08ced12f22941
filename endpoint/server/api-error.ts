/**
 * The endpoint's error answers: `{"error": {"type", "code", "message", "param"?}}` with the
 * right status, built from domain errors in one place. Never a stack trace.
 */

import { JsonInputError } from "../../shared/domain/contracts/json.ts";
import { SystemOneViolationError } from "../../shared/domain/contracts/system-one/index.ts";
import { InvalidDecisionError, ModelFileError, SlotCheckError } from "../runtime/errors.ts";
import { QueueFullError, TaskAbortedError } from "../runtime/work-queue.ts";

/** Error categories, as in OpenAI-style error bodies. */
export type ApiErrorType =
  | "invalid_request_error"
  | "not_found_error"
  | "request_too_large"
  | "overloaded_error"
  | "timeout_error"
  | "model_error"
  | "api_error";

/** The abort reason of requests still waiting when the server shuts down. */
export class ShuttingDownError extends Error {
  override name = "ShuttingDownError";
  constructor() {
    super("the server is shutting down");
  }
}

/** An error answer: HTTP status plus the JSON body fields. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly type: ApiErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** The response body. */
  body(): { error: { type: string; code: string; message: string; param?: string } } {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        ...(this.param ? { param: this.param } : {}),
      },
    };
  }
}

/** A 422 for one invalid field. */
export function invalidField(param: string | undefined, message: string, code = "invalid_value"): ApiError {
  return new ApiError(422, "invalid_request_error", code, message, param);
}

/** Maps any thrown value to the answer a client should get. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof JsonInputError) return invalidField(error.param, error.message, "invalid_json");
  // A request that breaks the contract, or one the scorer cannot fit: the param is System One's.
  if (error instanceof SystemOneViolationError && error.side === "request")
    return invalidField(error.param, error.message, error.code);
  if (error instanceof InvalidDecisionError) return invalidField(error.field, error.message, error.code);
  if (error instanceof QueueFullError) {
    return new ApiError(503, "overloaded_error", "queue_full", error.message, undefined, 1);
  }
  if (error instanceof TaskAbortedError && error.cause instanceof ShuttingDownError) {
    return new ApiError(
      503,
      "overloaded_error",
      "shutting_down",
      "the server is shutting down",
      undefined,
      1,
    );
  }
  if (error instanceof TaskAbortedError) {
    return new ApiError(
      504,
      "timeout_error",
      "deadline_exceeded",
      `the request ran past its deadline: ${error.message}`,
    );
  }
  if (error instanceof ModelFileError || error instanceof SlotCheckError) {
    return new ApiError(500, "model_error", error.code, error.message);
  }
  return new ApiError(
    500,
    "api_error",
    "internal_error",
    "the model failed while answering; see the server log",
  );
}
