/**
 * `decide calibrate --model FILE`: the runtime loaded in this process, answering exactly as the
 * endpoint would (the pipeline's System One request, validated, scored and read back through
 * the same contract), so that calibration in process and against the deployed endpoint agree.
 */
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { InProcessDecisionEndpoint } from "../../endpoint/server/in-process-endpoint.ts";
import type { ScoringSource } from "./calibrate-source.ts";

/** Loads `modelPath` and scores one item at a time on it. */
export async function inProcessSource(modelPath: string): Promise<ScoringSource> {
  const model = await DecisionModel.load({ modelPath });
  const scorer = await DecisionScorer.create(model);
  return {
    name: modelPath,
    endpoint: new InProcessDecisionEndpoint(scorer, modelPath),
    concurrency: 1,
    close: async () => {
      await scorer.dispose();
      await model.dispose();
    },
  };
}
