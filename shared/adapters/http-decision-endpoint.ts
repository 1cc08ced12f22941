/**
 * Decides items on any System One server reached over plain HTTP (this runtime's `/v1/systemone`,
 * or another server speaking the same API): the same request as the SageMaker client, the same
 * contract reading, and the same retries (backoff with full jitter for connection errors,
 * timeouts, 429 and 5xx; a 4xx other than 408 and 429 refuses the item and is never retried).
 */
import {
  answerIdsOf,
  readDecisionAnswer,
  SYSTEM_ONE_PATH,
  SystemOneViolationError,
  systemOneRequest,
} from "../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "../domain/errors.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";
import { type EndpointClientOptions, withRetries } from "./decision-endpoint.ts";

/** The URL requests go to: a bare origin gets the System One path. */
export function systemOneUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new RangeError(`${url}: only http and https URLs are supported`);
  if (parsed.pathname === "/" || parsed.pathname === "") parsed.pathname = SYSTEM_ONE_PATH;
  return parsed.toString();
}

/** A System One server over HTTP. */
export class HttpDecisionEndpoint implements DecidesItems {
  readonly url: string;

  constructor(
    url: string,
    /** How calls are timed and tried. */
    readonly settings: EndpointClientOptions,
  ) {
    this.url = systemOneUrl(url);
  }

  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const body = JSON.stringify(systemOneRequest(item, policy));
    return withRetries(this.settings, this.url, async () => {
      const started = performance.now();
      let response: Response;
      let text: string;
      try {
        response = await fetch(this.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body,
          signal: AbortSignal.timeout(this.settings.timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        throw new EndpointUnavailableError(`${this.url}: ${(error as Error).message}`, { cause: error });
      }
      const status = response.status;
      if (status >= 400 && status < 500 && status !== 408 && status !== 429)
        throw new EndpointRejectedError(
          `${this.url} refused the item (${status}): ${text.slice(0, 300)}`,
          status,
        );
      if (status !== 200)
        throw new EndpointUnavailableError(`${this.url} answered ${status}: ${text.slice(0, 300)}`);
      try {
        const answer = readDecisionAnswer(JSON.parse(text), policy.type, answerIdsOf(policy));
        return { ...answer, latencyMs: performance.now() - started };
      } catch (error) {
        const message =
          error instanceof SystemOneViolationError ? error.message : `not JSON (${(error as Error).message})`;
        throw new EndpointUnavailableError(`${this.url}: ${message}`, { cause: error });
      }
    });
  }
}
