/**
 * `decide calibrate --model FILE`: the runtime loaded in this process, answering exactly as the
 * endpoint would (the pipeline's System One request, translated, scored and read back through
 * the same contract), so that calibration in process and against the deployed endpoint agree.
 */
import { DecisionModel } from "../endpoint/runtime/decision-model.ts";
import { InvalidDecisionError } from "../endpoint/runtime/errors.ts";
import { DecisionScorer } from "../endpoint/scorer/scorer.ts";
import { parseSystemOne, systemOneResponse } from "../endpoint/server/systemone.ts";
import { answerIdsOf, systemOneRequest } from "../shared/adapters/decision-endpoint.ts";
import { stringifyJson } from "../shared/domain/contracts/json.ts";
import { readDecisionAnswer } from "../shared/domain/contracts/system-one.ts";
import type { DecidesItems, EndpointDecision } from "../shared/domain/decision-endpoint.ts";
import { EndpointRejectedError } from "../shared/domain/errors.ts";
import type { Item } from "../shared/domain/item.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import type { ScoringSource } from "./calibrate-source.ts";

/** Loads `modelPath` and scores one item at a time on it. */
export async function inProcessSource(modelPath: string): Promise<ScoringSource> {
  const model = await DecisionModel.load({ modelPath });
  const scorer = await DecisionScorer.create(model);
  const endpoint: DecidesItems = {
    async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
      const started = performance.now();
      let call: ReturnType<typeof parseSystemOne>;
      try {
        call = parseSystemOne(systemOneRequest(item, policy), { tokenMass: true });
      } catch (error) {
        throw new EndpointRejectedError((error as Error).message, 422, { cause: error });
      }
      let result: Awaited<ReturnType<DecisionScorer["score"]>>;
      try {
        result = await scorer.score(call.decision);
      } catch (error) {
        // A state too long for the context, say: that row is refused, the others go on.
        if (error instanceof InvalidDecisionError)
          throw new EndpointRejectedError(error.message, 422, { cause: error });
        throw error;
      }
      const body = JSON.parse(stringifyJson(systemOneResponse(call, result, modelPath)));
      const answer = readDecisionAnswer(body, policy.type, answerIdsOf(policy));
      return { ...answer, latencyMs: performance.now() - started };
    },
  };
  return {
    name: modelPath,
    endpoint,
    concurrency: 1,
    close: async () => {
      await scorer.dispose();
      await model.dispose();
    },
  };
}
