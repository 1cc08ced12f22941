/**
 * Calls the decision endpoint through SageMaker's InvokeEndpoint: a System One request built
 * from the policy, a per-call timeout, and retries with exponential backoff and full jitter for
 * throttling, 5xx, timeouts and model errors from a failing container. A model error that wraps a
 * 4xx means the item itself was refused: that is never retried. Answers are read through the
 * System One contract (`shared/domain/contracts/system-one/index.ts`): one that breaks it is an endpoint
 * failure, retried and then dead-lettered, never routed.
 */
import { InvokeEndpointCommand, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { backoff } from "../domain/backoff.ts";
import {
  answerIdsOf,
  malformed,
  readDecisionAnswer,
  SystemOneViolationError,
  systemOneRequest,
} from "../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "../domain/errors.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";

/**
 * Options of the endpoint clients, all required: their values come from the topology
 * (`ENDPOINT_CALLS`) where the clients are composed, so no client carries a default of its own.
 */
export interface EndpointClientOptions {
  /** Per-call timeout (SageMaker real-time allows 60 s). */
  readonly timeoutMs: number;
  /** Tries per item. */
  readonly attempts: number;
  /** First backoff; doubles each try, with full jitter. */
  readonly baseDelayMs: number;
}

/**
 * Tries `once` up to `settings.attempts` times with backoff: an {@link EndpointRejectedError}
 * (the item itself was refused) ends it at once; any other failure is tried again, and after the
 * last try it is thrown as an {@link EndpointUnavailableError} naming `where`.
 */
export async function withRetries(
  settings: EndpointClientOptions,
  where: string,
  once: () => Promise<EndpointDecision>,
): Promise<EndpointDecision> {
  let last: Error | undefined;
  for (let attempt = 1; attempt <= settings.attempts; attempt++) {
    await backoff(attempt, settings.baseDelayMs);
    try {
      return await once();
    } catch (error) {
      if (error instanceof EndpointRejectedError) throw error;
      last = error as Error;
    }
  }
  throw new EndpointUnavailableError(`${where} failed ${settings.attempts} times: ${last?.message}`, {
    cause: last,
  });
}

/** Decides items on a SageMaker endpoint (or the local runtime behind AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME). */
export class SageMakerDecisionEndpoint implements DecidesItems {
  constructor(
    private readonly client: SageMakerRuntimeClient,
    readonly endpointName: string,
    /** How calls are timed and tried. */
    readonly settings: EndpointClientOptions,
  ) {}

  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const body = JSON.stringify(systemOneRequest(item, policy));
    return withRetries(this.settings, `endpoint ${this.endpointName}`, async () => {
      const started = performance.now();
      try {
        const output = await this.client.send(
          new InvokeEndpointCommand({
            EndpointName: this.endpointName,
            ContentType: "application/json",
            Accept: "application/json",
            Body: body,
            ...priorityOf([item]),
          }),
          { abortSignal: AbortSignal.timeout(this.settings.timeoutMs) },
        );
        const answer = readDecisionAnswer(parseBody(output.Body), policy.type, answerIdsOf(policy));
        return { ...answer, latencyMs: performance.now() - started };
      } catch (error) {
        throw classify(error, this.endpointName);
      }
    });
  }
}

/**
 * The CustomAttributes that make the endpoint serve `items` after live traffic: set when every
 * one came in a batch (the batch lane), so a large batch uses spare capacity only.
 */
export function priorityOf(items: readonly Pick<Item, "batchId">[]): { CustomAttributes?: string } {
  return items.length > 0 && items.every((item) => item.batchId)
    ? { CustomAttributes: "priority=batch" }
    : {};
}

/** The JSON of an InvokeEndpoint answer; a body that is not JSON breaks the contract. */
export function parseBody(body: Uint8Array | undefined): unknown {
  const text = new TextDecoder().decode(body);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw malformed(undefined, `not JSON (${(error as Error).message})`, error);
  }
}

/** Whether a failed call may pass on a retry (unavailable) or the item itself was refused. */
export function classify(error: unknown, endpoint: string): EndpointUnavailableError | EndpointRejectedError {
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
