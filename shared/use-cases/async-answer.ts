/**
 * One line of an async object's answers, as the decide path's endpoint: the result step hands
 * `decideMessage` an endpoint that "decides" the item with the answer the async endpoint already
 * wrote, so that an item answered asynchronously is recorded, routed, published and counted by
 * exactly the code a real-time answer goes through. The line is read through the System One
 * contract like any answer: one that breaks it fails its item, and its item only.
 *
 * A line is `{"status": 200, "body": <System One response>}`, or an error status with the error
 * body a single call would have had (the container's JSONL answers, `endpoint/server/async-invocation.ts`).
 */
import { answerIdsOf, malformed, readDecisionAnswer } from "../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "../domain/errors.ts";
import type { Policy } from "../domain/policy/policy.ts";

/**
 * The item was scored under another policy version than the one deciding it now (a new version
 * came out between submit and answer): it is submitted again, counting as no failure.
 */
export class ScoredUnderOtherVersionError extends Error {
  override name = "ScoredUnderOtherVersionError";
}

/** One answer line: its status and body, or why it cannot be read. */
function readLine(line: string | undefined): { status: number; body: unknown } {
  if (line === undefined) throw malformed(undefined, "no answer line for this item");
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw malformed(undefined, `the answer line is not JSON (${(error as Error).message})`, error);
  }
  const { status, body } = (value ?? {}) as { status?: unknown; body?: unknown };
  if (typeof status !== "number" || !Number.isInteger(status) || body === undefined)
    throw malformed(undefined, "an answer line must be {status, body}");
  return { status, body };
}

/** The error message an error body carries. */
function messageOf(body: unknown): string {
  const message = (body as { error?: { message?: unknown } })?.error?.message;
  return String(message ?? JSON.stringify(body)).slice(0, 300);
}

/**
 * The endpoint that answers with `line` (undefined when the output had no line for the item) for
 * the policy version `scoredUnder` names; asked about another version (the live one moved on, or
 * a shadow candidate), it refuses with {@link ScoredUnderOtherVersionError}.
 */
export function answeredEndpoint(
  line: string | undefined,
  scoredUnder: { readonly policyId: string; readonly policyVersion: number },
): DecidesItems {
  return {
    // The object was scored by the first model only: a cascade's later model is not asked here
    // (its items go to people as the first model left them), never answered with this line again.
    serves: () => false,
    async decide(_item, policy: Policy): Promise<EndpointDecision> {
      if (policy.id !== scoredUnder.policyId || policy.version !== scoredUnder.policyVersion)
        throw new ScoredUnderOtherVersionError(
          `scored under ${scoredUnder.policyId}@${scoredUnder.policyVersion}, asked for ${policy.id}@${policy.version} (the async lane scores the live version only)`,
        );
      const { status, body } = readLine(line);
      if (status === 200) {
        const answer = readDecisionAnswer(body, policy.type, answerIdsOf(policy));
        const total = (body as { x_detail?: { total_ms?: unknown } }).x_detail?.total_ms;
        return { ...answer, latencyMs: typeof total === "number" ? total : 0 };
      }
      if (status >= 400 && status < 500 && status !== 408)
        throw new EndpointRejectedError(`the model refused the item (${status}): ${messageOf(body)}`, status);
      throw new EndpointUnavailableError(`the item's answer was ${status}: ${messageOf(body)}`);
    },
  };
}
