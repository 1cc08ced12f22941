/**
 * What a failed InvokeEndpoint call means for the item, in the domain's terms: a busy endpoint
 * (its admission queue full, throttled, the model not ready, the deadline passed while the item
 * waited) is overloaded, which is no failure of the item; an answer that breaks the contract or a
 * failing endpoint may pass on a retry (unavailable); a 4xx from the model, or SageMaker refusing
 * the request itself, means the item was refused.
 */
import { SystemOneViolationError } from "../domain/contracts/system-one/index.ts";
import {
  EndpointOverloadedError,
  EndpointRejectedError,
  EndpointUnavailableError,
  type OverloadReason,
} from "../domain/errors.ts";

/** The endpoint container's error codes that mean it was too busy (`endpoint/server/api-error.ts`). */
const BUSY_CODES: Readonly<Record<string, OverloadReason>> = {
  queue_full: "queue_full",
  model_loading: "model_not_ready",
  deadline_exceeded: "deadline_exceeded",
  shutting_down: "unavailable",
};

/** The `error.code` of an error body (parsed, or JSON text), if it has one. */
function errorCodeOf(body: unknown): string | undefined {
  let parsed = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const code = (parsed as { error?: { code?: unknown } } | null)?.error?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Why an answer of the container (its HTTP status and error body) means the endpoint was too busy,
 * or undefined when it does not: a busy code, a 429, or a 503 (unavailable for now).
 */
export function overloadOf(status: number, body: unknown): OverloadReason | undefined {
  const code = errorCodeOf(body);
  if (code !== undefined && Object.hasOwn(BUSY_CODES, code)) return BUSY_CODES[code];
  if (status === 429) return "throttled";
  if (status === 503) return "unavailable";
  return undefined;
}

/** Whether a failed call means overload, a failure that may pass on a retry, or a refused item. */
export function classify(
  error: unknown,
  endpoint: string,
): EndpointOverloadedError | EndpointUnavailableError | EndpointRejectedError {
  if (error instanceof SystemOneViolationError) {
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
  const status = e.$metadata?.httpStatusCode;
  const busy = (reason: OverloadReason, detail: string) =>
    new EndpointOverloadedError(`${endpoint} is overloaded (${reason}): ${detail}`, reason, { cause: error });
  if (e.name === "ModelError") {
    const original = e.OriginalStatusCode ?? 500;
    const reason = overloadOf(original, e.OriginalMessage);
    if (reason) return busy(reason, `the model answered ${original}`);
    if (original >= 400 && original < 500 && original !== 408) {
      return new EndpointRejectedError(
        `the model refused the item (${original}): ${e.OriginalMessage ?? e.message}`,
        original,
        { cause: error },
      );
    }
    return new EndpointUnavailableError(`model error ${original} from ${endpoint}`, { cause: error });
  }
  if (e.name === "ModelNotReadyException") return busy("model_not_ready", e.message ?? "not ready");
  if (e.name === "ThrottlingException" || status === 429) return busy("throttled", e.message ?? "throttled");
  if (e.name === "ServiceUnavailable" || status === 503) {
    // SageMaker's own 503, or (behind the local runtime) the container's busy answer in the message.
    return busy(overloadOf(503, e.message) ?? "unavailable", e.message ?? "unavailable");
  }
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
