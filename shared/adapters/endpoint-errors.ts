/**
 * What a failed InvokeEndpoint call means for the item, in the domain's terms: an answer that
 * breaks the contract or a failing endpoint may pass on a retry (unavailable); a 4xx from the
 * model, or SageMaker refusing the request itself, means the item was refused.
 */
import { MalformedAnswerError } from "../domain/contracts/system-one.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "../domain/errors.ts";

/** Whether a failed call may pass on a retry (unavailable) or the item itself was refused. */
export function classify(error: unknown, endpoint: string): EndpointUnavailableError | EndpointRejectedError {
  if (error instanceof MalformedAnswerError) {
    // A 200 that breaks the contract is a broken endpoint, never a decision: retry, then dead-letter.
    return new EndpointUnavailableError(`${endpoint}: ${error.message}`, { cause: error });
  }
  const e = error as {
    name?: string;
    message?: string;
    OriginalStatusCode?: number;
    OriginalMessage?: string;
    $metadata?: { httpStatusCode?: number };
  };
  if (e.name === "ModelError") {
    const original = e.OriginalStatusCode ?? 500;
    if (original >= 400 && original < 500 && original !== 408 && original !== 429) {
      return new EndpointRejectedError(
        `the model refused the item (${original}): ${e.OriginalMessage ?? e.message}`,
        original,
        { cause: error },
      );
    }
    return new EndpointUnavailableError(`model error ${original} from ${endpoint}`, { cause: error });
  }
  const status = e.$metadata?.httpStatusCode;
  if (e.name === "ValidationError" || status === 413) {
    // SageMaker refused the request itself (too large, bad content type): the same item fails again.
    return new EndpointRejectedError(
      `the endpoint refused the request (${status ?? 400}): ${e.message ?? String(error)}`,
      status ?? 400,
      { cause: error },
    );
  }
  return new EndpointUnavailableError(
    `${e.name ?? "error"}${status ? ` ${status}` : ""} from ${endpoint}: ${e.message ?? String(error)}`,
    { cause: error },
  );
}
