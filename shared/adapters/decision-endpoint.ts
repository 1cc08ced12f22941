/**
 * Calls the decision endpoint through SageMaker's InvokeEndpoint: a System One request built
 * from the policy, a per-call timeout, and retries with exponential backoff and full jitter for
 * 5xx, timeouts and model errors from a failing container. A model error that wraps a 4xx means
 * the item itself was refused: that is never retried; nor is an overloaded endpoint (throttling,
 * a full admission queue, the model not ready: `endpoint-errors.ts`), whose item goes back to its
 * queue to wait. Answers are read through the
 * System One contract (`shared/domain/contracts/system-one/index.ts`): one that breaks it is an endpoint
 * failure, retried and then dead-lettered, never routed.
 */
import { InvokeEndpointCommand, type SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { backoff } from "../domain/backoff/backoff.ts";
import {
  answerIdsOf,
  malformed,
  readDecisionAnswer,
  systemOneRequest,
} from "../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import {
  EndpointOverloadedError,
  EndpointRejectedError,
  EndpointUnavailableError,
} from "../domain/errors.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { classify } from "./endpoint-errors.ts";

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
 * (the item itself was refused) or an {@link EndpointOverloadedError} (trying again at once would
 * only add load; the item waits in its queue instead) ends it at once; any other failure is tried
 * again, and after the last try it is thrown as an {@link EndpointUnavailableError} naming `where`.
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
      if (error instanceof EndpointRejectedError || error instanceof EndpointOverloadedError) throw error;
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
