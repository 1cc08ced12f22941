/**
 * The decision endpoint in this process: the pipeline's System One request goes through the
 * same steps as over HTTP (serialized, validated by the contract, scored, written, read back), so
 * that calibration in process and against the deployed endpoint agree to the bit.
 */
import { parseJsonStrict, stringifyJson } from "../../shared/domain/contracts/json.ts";
import {
  answerIdsOf,
  parseSystemOneRequest,
  readDecisionAnswer,
  SystemOneViolationError,
  systemOneRequest,
  systemOneResponse,
} from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { InvalidDecisionError } from "../runtime/errors.ts";
import type { DecisionScorer } from "../scorer/scorer.ts";

/** Decides items on a scorer loaded in this process, one at a time (the scorer queues them). */
export class InProcessDecisionEndpoint implements DecidesItems {
  constructor(
    private readonly scorer: DecisionScorer,
    /** The name answers report as their model. */
    readonly modelName: string,
  ) {}

  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const started = performance.now();
    const body = parseJsonStrict(JSON.stringify(systemOneRequest(item, policy)));
    let answer: string;
    try {
      const request = parseSystemOneRequest(body, { tokenMass: true });
      answer = stringifyJson(systemOneResponse(request, await this.scorer.score(request), this.modelName));
    } catch (error) {
      // What the endpoint answers 422 for (a state too long for the context, say): that item is
      // refused, the others go on.
      if (error instanceof SystemOneViolationError || error instanceof InvalidDecisionError)
        throw new EndpointRejectedError(error.message, 422, { cause: error });
      throw error;
    }
    const decision = readDecisionAnswer(JSON.parse(answer), policy.type, answerIdsOf(policy));
    return { ...decision, latencyMs: performance.now() - started };
  }
}
