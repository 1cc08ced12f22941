/**
 * The read-out of one question from its passes: the passes' option logits put back in declared
 * order and combined, the calibrated and raw probabilities, the chosen option and its confidence,
 * a score question's expected level, the allowed-token mass and the likelihood detail over the
 * passes, token counts, the prompt's version and hash, and the timings. The scorer runs the
 * passes on the model (its work queue, context and prefix slots); this only reads out what they
 * gave, with no model at hand.
 */
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { DecisionQuestion, QuestionResult } from "../../shared/domain/contracts/system-one/index.ts";
import { argmax, confidence, expectedLevel, softmax } from "../../shared/domain/probability.ts";
import { combineLikelihoods, combinePasses } from "./option-order.ts";
import type { PassResult } from "./question-pass.ts";

/**
 * The answer to `question` from the results of its `passes` (each pass's display order of the
 * options, as `optionPasses` gives them); `times` says when scoring began and when the passes ended.
 */
export function readQuestion(
  question: DecisionQuestion,
  passes: readonly number[][],
  results: readonly PassResult[],
  times: { readonly startedAt: number; readonly evaluatedAt: number },
): QuestionResult {
  const logits = combinePasses(
    passes,
    results.map((r) => r.logits),
  );
  const probabilities = softmax(logits, question.temperature);
  const rawProbabilities = softmax(logits, 1);
  const optionIds = question.options.map((option) => option.id);
  const masses = results.map((r) => r.allowedTokenMass).filter((m) => m !== null);
  const likelihood = combineLikelihoods(passes, results);
  const sum = (pick: (r: PassResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  const readAt = performance.now();
  return {
    key: question.key,
    type: question.type,
    scoring: question.scoring,
    optionIds,
    probabilities,
    rawProbabilities,
    logits,
    temperature: question.temperature,
    chosen: optionIds[argmax(logits)]!,
    confidence: confidence(probabilities),
    ...(question.type === "score" ? { score: expectedLevel(probabilities) } : {}),
    ...(question.type === "noul" ? { noul: probabilities[0]! } : {}),
    allowedTokenMass: masses.length > 0 ? sum((r) => r.allowedTokenMass ?? 0) / masses.length : null,
    ...(likelihood ? { likelihood } : {}),
    optionOrder: question.option_order,
    passes: passes.length,
    inputTokens: sum((r) => r.inputTokens),
    reusedTokens: sum((r) => r.reusedTokens),
    evaluatedTokens: sum((r) => r.evaluatedTokens),
    promptVersion: results[0]!.promptVersion,
    // One pass: that prompt's hash. Several: the hash of theirs, in pass order.
    promptSha256:
      results.length === 1
        ? results[0]!.promptSha256
        : createHash("sha256")
            .update(results.map((r) => r.promptSha256).join("\n"))
            .digest("hex"),
    timings: {
      renderMs: sum((r) => r.renderMs),
      evaluateMs: sum((r) => r.evaluateMs),
      readoutMs: readAt - times.evaluatedAt,
      totalMs: readAt - times.startedAt,
    },
  };
}
